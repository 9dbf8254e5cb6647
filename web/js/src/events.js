// Events, shared by every object of the package that fires them (the upload, the queued
// upload, the XMLHttpRequest facade and its `upload`): the on<type> handler properties, copies
// of an event to fire again elsewhere, and dispatch that a throwing listener cannot break.

/** The events of an upload (docs/api.md, "Events and handler properties"), with a handler property each. */
export const UPLOAD_EVENTS = Object.freeze(["loadstart", "progress", "load", "error", "abort", "loadend", "retry", "statechange"]);

const handlers = new WeakMap(); // target -> Map(type -> { fn, listener })

/**
 * Defines on<type> handler properties on cls.prototype for each type, as the HTML standard's
 * event handler attributes behave: the first function set becomes a listener, which keeps its
 * place among the others when another function is set; null (or anything not a function)
 * removes it. The handler is called with `this` the target and the event.
 */
export function defineHandlers(cls, types) {
  for (const type of types) {
    Object.defineProperty(cls.prototype, "on" + type, {
      configurable: true,
      enumerable: true,
      get() {
        return handlers.get(this)?.get(type)?.fn ?? null;
      },
      set(fn) {
        let byType = handlers.get(this);
        if (!byType) handlers.set(this, (byType = new Map()));
        const h = byType.get(type);
        if (typeof fn !== "function") {
          if (h) this.removeEventListener(type, h.listener);
          byType.delete(type);
          return;
        }
        if (h) return void (h.fn = fn);
        const entry = { fn, listener: (e) => entry.fn.call(this, e) };
        byType.set(type, entry);
        this.addEventListener(type, entry.listener);
      },
    });
  }
}

/** Forgets target's handler properties: an ended queued upload lets go of them (queue.js). */
export function dropHandlers(target) {
  handlers.delete(target);
}

/** A copy of `e` that can be dispatched again (an event cannot be dispatched twice), with the fields put on it. */
export function copyEvent(e) {
  const copy =
    e instanceof ProgressEvent
      ? new ProgressEvent(e.type, { loaded: e.loaded, total: e.total, lengthComputable: e.lengthComputable })
      : new Event(e.type);
  // The fields the Upload put on it (confirmed, error, result, …); isTrusted is the event's own.
  for (const k of Object.keys(e)) if (k !== "isTrusted") copy[k] = e[k];
  return copy;
}

/** Calls fn(...args) as an event listener would be called: what it throws is reported, not raised. */
export function callSafely(fn, ...args) {
  try {
    return fn(...args);
  } catch (err) {
    reportError(err);
  }
}

/** Reports an error the page's code threw in a callback, as the browser does for a listener. */
export function reportError(err) {
  if (globalThis.reportError) globalThis.reportError(err);
  else setTimeout(() => {
    throw err;
  });
}
