// The React hooks of docs/api.md ("React"): dist/react.js, imported as "mediaupload/react".
//
//   const { mu, error } = useMediaUpload();      the module, loaded once per page
//   const one = useUpload(mu);                    one.start(file, options) from an event handler
//   const q = useQueue(mu, { concurrency: 3 });   q.add(file, options) from an event handler
//   const view = useUploadState(up);              any Upload: a queued one, a resumed one, …
//   const left = useUnfinished(mu);               left.list; left.resume(item), left.forget(item)
//
// As React's docs advise (react.dev, "You Might Not Need an Effect"): an upload starts in the
// event handler that asks for it, never in an effect, so neither a re-render nor StrictMode's
// doubled effects start one, and a re-render never aborts one. What an upload or a queue says
// is read with useSyncExternalStore from one small store per object (below). Effects are left
// for what synchronises with the outside on mount: loading the module, and asking for the
// unfinished list; both are shared while in flight, so StrictMode's second run starts nothing.
//
// Invariants:
//   1. A component's subscription to a store is removed when it unmounts (useSyncExternalStore),
//      and a store listens to its Upload or queue only while a component is subscribed: an
//      unmount leaves no listener behind. Nothing is aborted by an unmount or a re-render.
//   2. An upload's store is made by the handler that starts the upload, and listens from then
//      until the first component subscribes (so that no event is missed in between), and never
//      after `loadend`. One made for an Upload already under way (or listened to again after an
//      unmount) shows its progress from the next progress event on; the result or the error
//      comes from the Upload's promise whenever it is made.
//   3. A queue's store needs no such start: everything it shows (loaded, total, the uploads,
//      whether all have settled) can be read from the queue at any time.
//   4. A snapshot is a frozen object, the same one until something it shows changes; `state`
//      is read from the Upload itself, so pause(), resume() and abort() through a hook show at
//      once (they tell the store, which re-renders before the browser paints).
//
// React and the module are the page's: neither is bundled here (build.mjs: "react" is external,
// and "./index.js" becomes dist/mediaupload.js beside this file, the one module of the page).

import { useCallback, useEffect, useMemo, useRef, useState, useSyncExternalStore } from "react";
import { load } from "./index.js";

const FINAL = new Set(["done", "failed", "aborted"]);
const noop = () => {};
const subscribeNothing = () => noop;

// --- the module -----------------------------------------------------------------------------

// One load per page, shared by every component: load() resolves to the same object each call.
const LOADING = Object.freeze({ mu: null, error: null, loading: true });
let loaded = LOADING;
let loadingNow = false;
const loadSubscribers = new Set();

function setLoaded(next) {
  loaded = next;
  for (const fn of [...loadSubscribers]) fn();
}

function subscribeLoad(fn) {
  loadSubscribers.add(fn);
  return () => loadSubscribers.delete(fn);
}

// Starts the load unless one is under way or done. After a failure the next component to mount
// tries again (load() forgets a failed load).
function startLoad(options) {
  if (loadingNow || loaded.mu) return;
  loadingNow = true;
  if (loaded !== LOADING) setLoaded(LOADING);
  load(options).then(
    (mu) => setLoaded(Object.freeze({ mu, error: null, loading: false })),
    (error) => setLoaded(Object.freeze({ mu: null, error, loading: false })),
  ).finally(() => (loadingNow = false));
}

/**
 * The module, loaded once per page: `{ mu, error, loading }`. `mu` is null until it has loaded;
 * `error` is the MediaUploadError ("load_error") of a failed load. The options (those of load())
 * of the first component to mount win, as with load() itself.
 */
export function useMediaUpload(options) {
  const state = useSyncExternalStore(subscribeLoad, () => loaded, () => LOADING);
  // Loading is synchronising with the outside, an effect's job; startLoad starts one load per
  // page, so StrictMode's second run of the effect starts nothing.
  const first = useRef(options);
  useEffect(() => startLoad(first.current), []);
  return state;
}

// --- one upload -----------------------------------------------------------------------------

const IDLE = Object.freeze({
  upload: null,
  state: null,
  sessionURL: null,
  progress: null,
  fraction: null,
  result: null,
  error: null,
  pause: noop,
  resume: noop,
  abort: noop,
});
const idleSnapshot = () => IDLE;
const uploadStores = new WeakMap();

/** The store of an Upload: one per Upload, whoever asks (invariant 2). */
function uploadStore(up) {
  let store = uploadStores.get(up);
  if (!store) uploadStores.set(up, (store = new UploadStore(up)));
  return store;
}

const UPLOAD_EVENTS = ["loadstart", "progress", "load", "error", "abort", "loadend", "statechange"];

class UploadStore {
  #up;
  #subscribers = new Set();
  #listening = false;
  #ended = false; // loadend has been heard, or the Upload had settled when the store was made
  #progress = null;
  #result = null;
  #error = null;
  #version = 0; // bumped by every change that state and sessionURL do not show
  #snapshot = null;
  #snapshotVersion = -1;

  constructor(up) {
    this.#up = up;
    this.#ended = FINAL.has(up.state);
    this.#listen(!this.#ended); // until the first subscriber comes (invariant 2)
    // A store made late (an Upload that settled before anyone asked) finds its end here.
    up.then(
      (result) => this.#result || this.changed(() => (this.#result = result)),
      (error) => this.#error || this.changed(() => (this.#error = error)),
    );
    this.pause = () => this.changed(() => up.pause());
    this.resume = () => this.changed(() => up.resume());
    this.abort = () => this.changed(() => up.abort());
  }

  #listen(on) {
    if (on === this.#listening) return;
    this.#listening = on;
    for (const type of UPLOAD_EVENTS) {
      if (on) this.#up.addEventListener(type, this.#onEvent);
      else this.#up.removeEventListener(type, this.#onEvent);
    }
  }

  #onEvent = (e) => {
    if (e.type === "loadend") {
      this.#ended = true;
      this.#listen(false);
    }
    this.changed(() => {
      if (typeof e.loaded === "number") {
        const { loaded, total, lengthComputable, confirmed, bytesPerSecond, secondsLeft } = e;
        this.#progress = Object.freeze({ loaded, total, lengthComputable, confirmed, bytesPerSecond, secondsLeft });
      }
      if (e.type === "load") this.#result = e.result;
      if (e.type === "error" || e.type === "abort") this.#error = e.error;
    });
  };

  /** Something it shows has changed (or may have: a queue paused every upload in it). */
  changed(change = noop) {
    change();
    this.#version++;
    for (const fn of [...this.#subscribers]) fn();
  }

  subscribe = (fn) => {
    this.#subscribers.add(fn);
    this.#listen(!this.#ended);
    return () => {
      this.#subscribers.delete(fn);
      if (this.#subscribers.size === 0) this.#listen(false);
    };
  };

  getSnapshot = () => {
    const up = this.#up;
    const s = this.#snapshot;
    if (s && this.#snapshotVersion === this.#version && s.state === up.state && s.sessionURL === up.sessionURL) return s;
    const p = this.#progress;
    const fraction = up.state === "done" ? 1 : p?.lengthComputable ? Math.min(1, p.loaded / p.total) : null;
    this.#snapshotVersion = this.#version;
    return (this.#snapshot = Object.freeze({
      upload: up,
      state: up.state,
      sessionURL: up.sessionURL,
      progress: p,
      fraction,
      result: this.#result,
      error: this.#error,
      pause: this.pause,
      resume: this.resume,
      abort: this.abort,
    }));
  };
}

/**
 * What an Upload says, kept up to date: `{ upload, state, sessionURL, progress, fraction,
 * result, error, pause, resume, abort }` (all null, and no-op actions, for no upload). Any
 * Upload: one from mu.upload, a queue's, one that useUnfinished resumed.
 */
export function useUploadState(up) {
  const store = up ? uploadStore(up) : null;
  return useSyncExternalStore(
    store ? store.subscribe : subscribeNothing,
    store ? store.getSnapshot : idleSnapshot,
    store ? store.getSnapshot : idleSnapshot,
  );
}

/**
 * One upload at a time: what useUploadState shows of the last one started, and
 * `start(source, options)`, which calls mu.upload from an event handler and returns its Upload.
 * Starting another leaves the one before running (abort it first if that is what you want).
 */
export function useUpload(mu) {
  const [up, setUp] = useState(null);
  const view = useUploadState(up);
  const start = useCallback(
    (source, options) => {
      const next = notLoaded(mu, "useUpload").upload(source, options);
      uploadStore(next); // listening from its first event on
      setUp(next);
      return next;
    },
    [mu],
  );
  return useMemo(() => ({ ...view, start }), [view, start]);
}

function notLoaded(mu, hook) {
  if (!mu) throw new TypeError(`mediaupload: ${hook}: the module is not loaded yet (mu is ${mu})`);
  return mu;
}

// --- a queue --------------------------------------------------------------------------------

const NO_QUEUE = Object.freeze({ queue: null, uploads: Object.freeze([]), loaded: 0, total: 0, fraction: null, idle: true });
const noQueueSnapshot = () => NO_QUEUE;
const queueStores = new WeakMap();

function queueStore(q) {
  let store = queueStores.get(q);
  if (!store) queueStores.set(q, (store = new QueueStore(q)));
  return store;
}

class QueueStore {
  #q;
  #subscribers = new Set();
  #snapshot = null;

  constructor(q) {
    this.#q = q;
  }

  #onEvent = () => {
    for (const fn of [...this.#subscribers]) fn();
  };

  // Invariant 1: listening only while someone is.
  subscribe = (fn) => {
    if (this.#subscribers.size === 0) {
      this.#q.addEventListener("progress", this.#onEvent);
      this.#q.addEventListener("idle", this.#onEvent);
    }
    this.#subscribers.add(fn);
    return () => {
      this.#subscribers.delete(fn);
      if (this.#subscribers.size > 0) return;
      this.#q.removeEventListener("progress", this.#onEvent);
      this.#q.removeEventListener("idle", this.#onEvent);
    };
  };

  // add(), pause(), resume() and abort() through the hook change what the snapshot shows.
  changed() {
    this.#onEvent();
  }

  getSnapshot = () => {
    const q = this.#q;
    const uploads = q.uploads;
    const idle = uploads.every((u) => FINAL.has(u.state));
    const { loaded, total } = q;
    const s = this.#snapshot;
    if (s && s.loaded === loaded && s.total === total && s.idle === idle && s.uploads.length === uploads.length) return s;
    const fraction = total > 0 ? Math.min(1, loaded / total) : null;
    return (this.#snapshot = Object.freeze({ queue: q, uploads: Object.freeze(uploads), loaded, total, fraction, idle }));
  };
}

/**
 * A queue (mu.queue): `{ queue, uploads, loaded, total, fraction, idle, add, pause, resume,
 * abort }`. The queue is made by the first `add(source, options)` (from an event handler), with
 * the options given then; `uploads` are its Uploads in the order added (show each with
 * useUploadState). `fraction` is loaded / total, null while total is 0.
 */
export function useQueue(mu, options) {
  const made = useRef(null);
  const [q, setQ] = useState(null);
  const store = q ? queueStore(q) : null;
  const snapshot = useSyncExternalStore(
    store ? store.subscribe : subscribeNothing,
    store ? store.getSnapshot : noQueueSnapshot,
    store ? store.getSnapshot : noQueueSnapshot,
  );
  const optionsRef = useRef(options);
  useEffect(() => {
    optionsRef.current = options;
  });
  const add = useCallback(
    (source, uploadOptions) => {
      // A ref, not the state: two adds in one handler go to the same queue.
      made.current ??= notLoaded(mu, "useQueue").queue(optionsRef.current);
      const queue = made.current;
      const up = queue.add(source, uploadOptions);
      uploadStore(up);
      setQ(queue);
      queueStore(queue).changed();
      return up;
    },
    [mu],
  );
  // pause(), resume() and abort() of every upload in it: each one's state shows at once.
  const every = useCallback((method) => {
    const queue = made.current;
    if (!queue) return;
    queue[method]();
    queueStore(queue).changed();
    for (const up of queue.uploads) uploadStores.get(up)?.changed();
  }, []);
  return useMemo(
    () => ({ ...snapshot, add, pause: () => every("pause"), resume: () => every("resume"), abort: () => every("abort") }),
    [snapshot, add, every],
  );
}

// --- the unfinished list --------------------------------------------------------------------

// The list asked of each module while in flight: the asks of mounting components (StrictMode's
// doubled effect, two components) share one answer rather than asking every server twice. An
// ask that must see a change (refresh(), a resumed upload that failed) asks anew, and so does
// any ask after an upload's end was heard: a shared answer may be older than that end.
const asking = new WeakMap(); // mu -> { promise, heard: the endings heard when it began }
let endingsHeard = 0;

function askUnfinished(mu, options, share) {
  const now = asking.get(mu);
  if (share && now && now.heard === endingsHeard) return now.promise;
  const entry = { heard: endingsHeard, promise: null };
  entry.promise = Promise.resolve()
    .then(() => mu.unfinished(options))
    .finally(() => asking.get(mu) === entry && asking.delete(mu));
  asking.set(mu, entry);
  return entry.promise;
}

// An upload with resume: true that ends (done, aborted, failed for good), in this page or in
// another tab of the origin, says so on the BroadcastChannel "mediaupload" as { key, ended: true }
// once its record is no longer unfinished (resume-store.js, a file of the module, which this one
// does not bundle). One channel for every useUnfinished, open from the first mount on: an ask
// in flight while none is mounted must still learn of the endings it may predate.
const endedListeners = new Set();
let endedChannel = null;

function listenForEnded(fn) {
  if (typeof BroadcastChannel !== "function") return noop;
  if (!endedChannel) {
    endedChannel = new BroadcastChannel("mediaupload");
    endedChannel.onmessage = ({ data }) => {
      if (!data?.ended || typeof data.key !== "string") return;
      endingsHeard++;
      for (const f of [...endedListeners]) f(data.key);
    };
  }
  endedListeners.add(fn);
  return () => endedListeners.delete(fn);
}

/**
 * The uploads `resume: true` left unfinished in this browser (mu.unfinished()): `{ list,
 * loading, error, refresh, resume, forget }`. Asked when the component mounts with a module,
 * and again on refresh(). An upload that ends (done, aborted, failed for good; in this page or
 * another tab) leaves the list as its record does. resume(item, options) goes on with one
 * (item.resume) and returns its Upload; it leaves the list at once, and comes back (asked
 * anew) should that upload fail with its record kept. forget(item) drops it (item.forget), from
 * the list at once. options: those of mu.unfinished(), read at each ask.
 */
export function useUnfinished(mu, options) {
  const [state, setState] = useState(UNFINISHED_START);
  const optionsRef = useRef(options);
  useEffect(() => {
    optionsRef.current = options;
  });
  const mounted = useRef(false);
  const asked = useRef(0); // only the last ask's answer is shown
  const [resumed] = useState(() => new Set()); // keys resumed here and still running: not listed
  // Keys whose upload ended while the last ask was in flight: its answer may predate the end.
  const [endedSinceAsked] = useState(() => new Set());

  const ask = useCallback(
    (share) => {
      if (!mu) return Promise.resolve();
      const n = ++asked.current;
      endedSinceAsked.clear();
      setState((s) => (s.loading ? s : { ...s, loading: true }));
      return askUnfinished(mu, optionsRef.current, share).then(
        (list) => {
          if (!mounted.current || n !== asked.current) return;
          const shown = list.filter((u) => !resumed.has(u.key) && !endedSinceAsked.has(u.key));
          setState({ list: Object.freeze(shown), loading: false, error: null });
        },
        (error) => {
          if (!mounted.current || n !== asked.current) return;
          setState((s) => ({ list: s.list, loading: false, error }));
        },
      );
    },
    [mu],
  );
  const refresh = useCallback(() => ask(false), [ask]);

  const drop = (key) => setState((s) => ({ ...s, list: Object.freeze(s.list.filter((u) => u.key !== key)) }));

  useEffect(() => {
    mounted.current = true;
    ask(true);
    const unlisten = listenForEnded((key) => {
      endedSinceAsked.add(key);
      drop(key);
    });
    return () => {
      mounted.current = false;
      unlisten();
    };
  }, [ask]);

  const resume = useCallback(
    (item, resumeOptions) => {
      const up = item.resume(resumeOptions);
      uploadStore(up);
      resumed.add(item.key);
      drop(item.key);
      up.then(
        () => resumed.delete(item.key),
        (err) => {
          resumed.delete(item.key);
          // Its record may still be there (a network failure; a file picked again that was
          // not the one): ask again, anew.
          if (err?.code !== "aborted" && mounted.current) refresh();
        },
      );
      return up;
    },
    [refresh],
  );

  const forget = useCallback(
    async (item) => {
      drop(item.key);
      try {
        await item.forget();
      } catch (err) {
        if (mounted.current) refresh();
        throw err;
      }
    },
    [refresh],
  );

  return useMemo(() => ({ ...state, refresh, resume, forget }), [state, refresh, resume, forget]);
}

const UNFINISHED_START = Object.freeze({ list: Object.freeze([]), loading: true, error: null });
