// A small app on mediaupload/react: one file (useUpload), many files in a queue (useQueue) with
// its total bar, and the uploads an earlier visit left unfinished (useUnfinished), each shown
// with its progress, pause/resume and cancel (useUploadState). Every upload starts in the event
// handler that asks for it; the hooks keep what the page shows up to date.
import { useRef, useState } from "react";
import { useMediaUpload, useQueue, useUnfinished, useUpload, useUploadState } from "mediaupload/react";

const FINAL = new Set(["done", "failed", "aborted"]);
const nameOf = new WeakMap(); // Upload -> its file's name (an Upload carries none)

export function App({ url, extra }) {
  const { mu, error } = useMediaUpload();
  // resume: true remembers each session in the browser: what a reload interrupts is listed
  // under "Unfinished uploads" on the next visit.
  const options = (file) => ({ ...extra, url, metadata: { name: file.name }, resume: true });
  return (
    <>
      <h1>mediaupload with React</h1>
      {error ? (
        <p id="status" className="error">load failed: {error.message}</p>
      ) : !mu ? (
        <p id="status">loading</p>
      ) : !url ? (
        <p id="status" className="error">no upload URL: run ./build.sh serve, or open this page with ?upload=</p>
      ) : (
        <>
          <p id="status">ready</p>
          <OneFile mu={mu} options={options} />
          <ManyFiles mu={mu} options={options} />
          <Unfinished mu={mu} extra={extra} />
        </>
      )}
    </>
  );
}

function OneFile({ mu, options }) {
  const one = useUpload(mu);
  const [name, setName] = useState("");
  const pick = (e) => {
    const file = e.target.files[0];
    e.target.value = ""; // the same file can be picked again
    if (!file) return;
    one.abort(); // a new file replaces the one before (a finished one is left as it is)
    setName(file.name);
    one.start(file, options(file));
  };
  return (
    <section id="one-file">
      <h2>One file</h2>
      <input type="file" id="one" onChange={pick} />
      <ul>{one.upload && <UploadRow name={name} view={one} />}</ul>
    </section>
  );
}

function ManyFiles({ mu, options }) {
  const q = useQueue(mu, { concurrency: 2 });
  const add = (e) => {
    for (const file of e.target.files) nameOf.set(q.add(file, options(file)), file.name);
    e.target.value = "";
  };
  return (
    <section id="queue">
      <h2>Many files: a queue, two at a time</h2>
      <input type="file" id="many" multiple onChange={add} />
      <p>
        <progress id="total" max="1" value={q.fraction ?? undefined} /> <span id="total-text">{percent(q.fraction)}</span>
        {q.uploads.length > 0 && ` of ${bytes(q.total)} `}
        {!q.idle && (
          <>
            <button onClick={q.pause}>Pause all</button> <button onClick={q.resume}>Resume all</button>{" "}
            <button onClick={q.abort}>Cancel all</button>
          </>
        )}
      </p>
      <ul id="queued">
        {q.uploads.map((up, i) => (
          <Row key={i} up={up} name={nameOf.get(up)} />
        ))}
      </ul>
    </section>
  );
}

function Unfinished({ mu, extra }) {
  const left = useUnfinished(mu);
  const [resumed, setResumed] = useState([]); // [{ name, up }]
  const picker = useRef(null);
  const waiting = useRef(null); // the item whose file is being picked again

  const go = (item, file) => {
    const up = left.resume(item, { ...extra, file });
    setResumed((r) => [...r, { name: item.name, up }]);
  };
  const resume = (item) => {
    if (item.canResume) return go(item);
    // The browser kept no handle to the file: the user picks it again (the same file, or the
    // upload fails with source_error before sending a byte).
    waiting.current = item;
    picker.current.click();
  };
  const picked = (e) => {
    const [file] = e.target.files;
    const item = waiting.current;
    e.target.value = "";
    waiting.current = null;
    if (file && item) go(item, file);
  };

  return (
    <section id="unfinished">
      <h2>Unfinished uploads</h2>
      <p>
        What an earlier visit left unfinished in this browser (a reload, a closed tab), with what the server holds.{" "}
        <button id="refresh" onClick={left.refresh}>Refresh</button> {left.loading && "asking the servers…"}
      </p>
      {!left.loading && left.list.length === 0 && <p id="none">None.</p>}
      <ul id="left">
        {left.list.map((item) => (
          <li key={item.key} data-name={item.name}>
            <span className="name">{item.name}</span>
            <span className="held">
              {item.confirmed === null ? "the server could not be asked" : `${bytes(item.confirmed)} of ${bytes(item.size)} on the server`}
            </span>
            {/* Running now, in this tab or another: its Resume waits until that upload stops. */}
            {item.running && <span className="running">uploading now</span>}
            <button className="resume" onClick={() => resume(item)}>
              {item.canResume ? "Resume" : "Pick the file and resume"}
            </button>
            {/* Should forgetting fail, the list is asked again and the item comes back. */}
            <button className="forget" onClick={() => left.forget(item).catch(() => {})}>
              Forget
            </button>
          </li>
        ))}
      </ul>
      <input type="file" ref={picker} onChange={picked} hidden />
      {resumed.length > 0 && (
        <>
          <h3>Resumed</h3>
          <ul id="resumed">
            {resumed.map(({ name, up }, i) => (
              <Row key={i} up={up} name={name} />
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

function Row({ up, name }) {
  return <UploadRow name={name} view={useUploadState(up)} />;
}

function UploadRow({ name, view }) {
  const { state, progress, fraction, error } = view;
  const running = state !== null && !FINAL.has(state);
  return (
    <li data-state={state} data-confirmed={progress?.confirmed ?? 0}>
      <span className="name">{name}</span>
      <progress max="1" value={fraction ?? undefined} />
      <span className="pct">{percent(fraction)}</span>
      <span className="state">{state === "aborted" ? "cancelled" : state}</span>
      {running && state !== "paused" && (
        <button className="pause" onClick={view.pause}>
          Pause
        </button>
      )}
      {state === "paused" && (
        <button className="resume" onClick={view.resume}>
          Resume
        </button>
      )}
      {running && (
        <button className="cancel" onClick={view.abort}>
          Cancel
        </button>
      )}
      {error && error.code !== "aborted" && <span className="error">{error.message}</span>}
    </li>
  );
}

function percent(fraction) {
  return fraction === null ? "" : `${Math.floor(fraction * 100)} %`;
}

function bytes(n) {
  if (n >= 1 << 20) return `${(n / (1 << 20)).toFixed(1)} MiB`;
  if (n >= 1 << 10) return `${(n / (1 << 10)).toFixed(1)} KiB`;
  return `${n} bytes`;
}
