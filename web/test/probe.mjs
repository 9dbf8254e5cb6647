// The probe of a page's event loop that the tests measure "the page never waits" by (docs/api.md,
// "Where the module runs"): the worst delay of a 10 ms timer on the page's main thread, and how
// much of it was the page's own. Both functions run in the page (page.evaluate(startProbe)):
// they are self-contained, and keep their state in window.__probe.

/**
 * Starts the probe of the page's event loop (run in the page, by evaluate): a 10 ms timer, and
 * how late each one fires. Beside it, the same timer in a Worker of the page, whose thread the
 * page's tasks do not hold: where the worker's timer was late over the same moment, the machine
 * (two shared cores, other processes) held both, and that much of the page's delay is not the
 * page's own.
 */
export function startProbe() {
  const clock = () => performance.timeOrigin + performance.now(); // the same clock in the worker
  const probe = (window.__probe = { on: true, t0: clock(), late: [], worst: 0 });
  let last = clock();
  const tick = () => {
    const now = clock();
    probe.worst = Math.max(probe.worst, now - last - 10);
    if (now - last - 10 > 20) probe.late.push([last + 10, now]);
    last = now;
    if (probe.on) setTimeout(tick, 10);
  };
  setTimeout(tick, 10);
  const src = `const clock = () => performance.timeOrigin + performance.now();
    let last = clock(), late = [];
    const tick = () => { const now = clock(); if (now - last - 10 > 5) late.push([last + 10, now]); last = now; setTimeout(tick, 10); };
    setTimeout(tick, 10);
    onmessage = () => postMessage(late);`;
  probe.url = URL.createObjectURL(new Blob([src], { type: "text/javascript" }));
  probe.worker = new Worker(probe.url);
}

/**
 * Stops the probe (in the page): { worst, control, own, stalls, ms } (ms; stalls: [ms from start,
 * ms late, ms the worker's was] of the delays over 50 ms; ms: how long it ran).
 */
export async function stopProbe() {
  const probe = window.__probe;
  probe.on = false;
  probe.worker.postMessage("");
  const control = await new Promise((resolve) => (probe.worker.onmessage = (e) => resolve(e.data)));
  probe.worker.terminate();
  URL.revokeObjectURL(probe.url);
  let own = 0, controlWorst = 0;
  const stalls = [];
  for (const [due, fired] of probe.late) {
    const late = fired - due;
    // The worker's worst lateness over an interval that overlaps this one.
    let theirs = 0;
    for (const [d, f] of control) if (d < fired && f > due) theirs = Math.max(theirs, f - d);
    own = Math.max(own, late - theirs);
    if (late > 50) stalls.push([Math.round(due - probe.t0), Math.round(late), Math.round(theirs)]);
  }
  for (const [d, f] of control) controlWorst = Math.max(controlWorst, f - d);
  return { worst: probe.worst, own, control: controlWorst, stalls, ms: performance.timeOrigin + performance.now() - probe.t0 };
}
