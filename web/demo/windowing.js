// The window of a long list, for the uploads list (list.js) and the objects table (objects.js):
// only the items near the screen are in the page, from a screen above what is seen to two
// below; the height of the others stands in for them (padding, or a spacer row). With a
// thousand rows in the page, the browser's own work (style, layout, paint, and
// content-visibility's checks of what is on screen) took 50-350 ms a frame in Chromium, and a
// listing of a thousand objects laid out again over 100 ms; with the window they cost what the
// rows in view cost. A list of at most SHORT items is in the page whole: the browser's find in
// page finds each of them, and a few files added show at once.

export const SHORT = 60;

/**
 * Which of count items go in the page: those from `first` to before `last`, `above` and `below`
 * the heights of the items before and after them (px). heightOf(i) is item i's height; `top`
 * is where the screen's top is in the list's own coordinates (negative while the list starts
 * below it), `screen` the height seen. A short list is whole.
 */
export function windowOf(count, heightOf, top, screen) {
  if (count <= SHORT) return { first: 0, last: count, above: 0, below: 0 };
  const from = top - screen, to = top + 2 * screen;
  let y = 0, first = -1, above = 0, last = count, below = 0;
  for (let i = 0; i < count; i++) {
    const h = heightOf(i);
    if (first < 0 && y + h > from) [first, above] = [i, y];
    if (first >= 0 && y >= to) {
      last = i;
      break;
    }
    y += h;
  }
  if (first < 0) [first, above] = [count, y];
  for (let i = last; i < count; i++) below += heightOf(i);
  return { first, last, above, below };
}

/**
 * Calls place() in the frame after a scroll of one of `targets` (or a resize of the window),
 * once a frame, while long() says the list is windowed.
 */
export function followScroll(targets, long, place) {
  let framing = false;
  const follow = () => {
    if (framing || !long()) return;
    framing = true;
    requestAnimationFrame(() => {
      framing = false;
      place();
    });
  };
  for (const t of targets) t.addEventListener("scroll", follow, { passive: true });
  addEventListener("resize", follow);
}
