// Whether the browser is online, as the host judges it (docs/api.md, "Offline spells and stalled
// requests"): a request that fails while the browser is offline costs no retry, and the upload
// waits until it is online again. On the page, navigator.onLine and the window's online event
// tell. In a Worker they cannot be relied on (web/test/engines/offline.test.mjs prints what each
// engine shows): Chromium fires neither online nor offline in a dedicated Worker, though the
// Worker's navigator.onLine follows the page's, so a Worker waiting for its online event waited
// for ever; Firefox's offline emulation (WebDriver BiDi) fails a Worker's requests while the
// Worker's navigator.onLine stays true, so each failure spent a retry. So in worker mode the page
// tells: worker-engine.js forwards the page's navigator.onLine at the start and with each of the
// page's online and offline events, and the host takes the browser for offline where the page
// says so or the realm's own navigator.onLine is false. (A request that fails in the moment
// before the page's word arrives is a lost connection, one retry; the next failure finds it.)

// While an upload waits for the browser to be online, the state is looked at again this often,
// besides at every online event and word of the page's: an event missed (one that a realm never
// gets) must not leave an upload waiting for ever.
const POLL_MS = 1000;

export class Online {
  #page = null; // the page's word (worker mode): its navigator.onLine; null where none came
  #waiting = new Set(); // what to call once online
  #timer = 0;

  /** The page's word, forwarded (worker mode): its navigator.onLine now. */
  told(on) {
    this.#page = on;
    this.#check();
  }

  /** Whether the browser is online, as this realm knows it now. */
  get now() {
    return this.#page !== false && globalThis.navigator?.onLine !== false;
  }

  /**
   * Calls fn once the browser is online (never at once: the caller asks only while it is not).
   * Returns the function that cancels the wait.
   */
  wait(fn) {
    this.#waiting.add(fn);
    if (this.#waiting.size === 1) {
      globalThis.addEventListener("online", this.#check);
      this.#timer = setInterval(this.#check, POLL_MS);
    }
    return () => {
      this.#waiting.delete(fn);
      if (this.#waiting.size === 0) this.#stop();
    };
  }

  #check = () => {
    if (this.#waiting.size === 0 || !this.now) return;
    const fns = [...this.#waiting];
    this.#waiting.clear();
    this.#stop();
    for (const fn of fns) fn();
  };

  #stop() {
    globalThis.removeEventListener("online", this.#check);
    clearInterval(this.#timer);
  }
}
