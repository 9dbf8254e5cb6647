// What every part of the demo shares of the page: finding an element ($), writing only what
// changed (set, attr), and how long one slice of the page's work may take (SLICE_MS, sliced).

/** The first element under root that matches sel. */
export const $ = (sel, root = document) => root.querySelector(sel);

/** Sets el's text, if it differs: a row drawn again costs no more than what moved. */
export function set(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

/** Sets el's attribute, if it differs. */
export function attr(el, name, value) {
  if (el.getAttribute(name) !== value) el.setAttribute(name, value);
}

/**
 * How long the demo works in one task before it lets the page go on (ms): the rest goes in the
 * next task. A thousand files dropped at once are made into entries, handed to the module and
 * drawn a slice at a time. The page's tasks must stay under 50 ms (the tests' bound), and what
 * follows a slice in the same task can cost more than the slice itself: the browser's style and
 * layout of the rows it drew (WebKit: 60-90 ms for twenty new rows), a pass of the collector, a
 * core another process holds. A slice of 4 ms leaves three quarters of a 60 Hz frame to them.
 */
export const SLICE_MS = 4;

/**
 * Work done SLICE_MS at a time: add(list) calls each(item) for every item of list, in order,
 * from the next task on (the task that adds them, a pick or a drop, holds the browser's own
 * work too: Chromium makes a thousand Files picked in one task of its own, docs/performance.md),
 * a slice a task. `items` is the work not done yet.
 */
export function sliced(each) {
  const items = [];
  let busy = false; // a slice is scheduled or runs: add() only queues
  const run = () => {
    const end = performance.now() + SLICE_MS;
    let i = 0;
    try {
      while (i < items.length && (i === 0 || performance.now() < end)) each(items[i++]);
    } finally {
      items.splice(0, i);
      busy = items.length > 0;
      if (busy) setTimeout(run, 0);
    }
  };
  return {
    items,
    add(list) {
      for (const item of list) items.push(item);
      if (busy || !items.length) return;
      busy = true;
      setTimeout(run, 0);
    },
  };
}
