// Browser tests of `resume: true`'s store and lock (docs/api.md, "Resuming after a reload"):
// records in IndexedDB, older localStorage records moved there, storage that throws or is full
// (nothing remembered, the upload still succeeds), one tab at a time per file (Web Locks), and
// a reload mid-upload with a crc32c checksum (the resumed upload's X-Goog-Hash is right: the
// reference server checks it).

import assert from "node:assert/strict";
import { MiB, useEnv } from "./harness.mjs";

let env, ref;
const { test, unique } = useEnv((e) => {
  env = e;
  ref = e.ref;
});


// Page code: every record of the store, and the log's kinds of request.
const RECORDS = () =>
  new Promise((resolve) => {
    const req = indexedDB.open("mediaupload", 1);
    req.onsuccess = () => {
      const tx = req.result.transaction("sessions");
      const keys = tx.objectStore("sessions").getAllKeys();
      const values = tx.objectStore("sessions").getAll();
      tx.oncomplete = () => {
        req.result.close();
        resolve(keys.result.map((k, i) => ({ key: k, ...values.result[i] })));
      };
    };
    req.onerror = () => resolve(null);
  });

async function requests() {
  return (await ref.log()).filter((e) => e.method !== "OPTIONS");
}

test("the record lives in IndexedDB; an earlier version's localStorage record is moved there and resumed", async () => {
  const name = unique("moved");
  const url = ref.uploadURL(name);
  const p = await env.openPage();
  try {
    // A session half done, remembered the way an earlier version did: in localStorage.
    const sessionURL = await p.evaluate(async (url) => {
      const file = T.file(1048576, 41, "old.bin");
      const r = await fetch(url + "&uploadType=resumable", { method: "POST", headers: { "X-Upload-Content-Length": String(file.size) } });
      const session = r.headers.get("Location");
      await fetch(session, { method: "PUT", headers: { "Content-Range": `bytes 0-262143/${file.size}` }, body: file.slice(0, 262144) });
      const key = "mediaupload:" + JSON.stringify([url, "POST", file.name, file.size, file.lastModified, file.type]);
      localStorage.setItem(key, JSON.stringify({ sessionURL: session, savedAt: Date.now() }));
      return session;
    }, url);
    await ref.clearLog();
    const out = await p.evaluate(async ({ url, RECORDS }) => {
      const records = new Function(`return (${RECORDS})`)();
      const r = await T.run(T.file(1048576, 41, "old.bin"), { url, resume: true, chunkSize: 262144 });
      return {
        r,
        left: Object.keys(localStorage).filter((k) => k.startsWith("mediaupload:")),
        records: await records(),
      };
    }, { url, RECORDS: RECORDS.toString() });
    assert.ok(out.r.ok, JSON.stringify(out.r.error));
    assert.equal(out.r.result.sessionURL, sessionURL, "the moved record's session was resumed");
    assert.deepEqual(await env.checkStored(name, MiB, 41), []);
    const log = await requests();
    assert.equal(log.filter((e) => e.method === "POST").length, 0, "no new session");
    assert.deepEqual(out.left, [], "localStorage no longer holds it");
    assert.equal(out.records.length, 1);
    assert.equal(out.records[0].done, true, "a finished upload's record is marked done");
  } finally {
    await p.close();
  }
});

for (const how of ["throws", "quota"]) {
  test(`storage that ${how === "throws" ? "throws" : "is full"}: nothing is remembered, the upload succeeds`, async () => {
    const name = unique(how);
    const p = await env.browser.newPage(env.web.url + "/test/blank.html");
    try {
      await p.evaluate((how) => {
        if (how === "throws") {
          indexedDB.open = () => {
            throw new DOMException("The user denied permission to access the database.", "SecurityError");
          };
        } else {
          IDBObjectStore.prototype.put = function () {
            throw new DOMException("The quota has been exceeded.", "QuotaExceededError");
          };
        }
      }, how);
      await p.waitForFunction(() => window.T);
      const r = await p.evaluate((url) => T.run(T.file(600_000, 43, "s.bin"), { url, resume: true, chunkSize: 262144 }), ref.uploadURL(name));
      assert.ok(r.ok, JSON.stringify(r.error));
      assert.deepEqual(await env.checkStored(name, 600_000, 43), []);
    } finally {
      await p.close();
    }
  });
}

test("the same file resumed in two tabs is uploaded by one; the other waits in queued and finishes from the server's state", async () => {
  const name = unique("tabs");
  const url = ref.uploadURL(name);
  // A slow link, so that the first tab is still uploading when the second starts.
  await ref.config({ link: { bitsPerSecond: 16_000_000, rttMs: 0 } });
  const a = await env.openPage();
  const b = await env.openPage(); // the same browser context: the same origin's locks and storage
  try {
    const size = 3 * MiB;
    const start = (p) =>
      p.evaluate((url) => {
        window.states = [];
        window.result = T.run(T.file(3 * 1024 * 1024, 44, "same.bin"), { url, resume: true, chunkSize: 262144 }, {
          onStart: (up) => {
            window.up = up;
            window.states.push(up.state);
            up.addEventListener("statechange", () => window.states.push(up.state));
          },
        });
      }, url);
    await start(a);
    await a.waitForFunction(() => window.up?.state === "uploading", null, { timeout: 20_000 });
    await start(b);
    await b.waitForFunction(() => window.states?.includes("queued"), null, { timeout: 10_000 });
    const [ra, rb] = await Promise.all([a.evaluate(() => window.result), b.evaluate(() => window.result)]);
    const statesB = await b.evaluate(() => window.states);
    assert.ok(ra.ok, JSON.stringify(ra.error));
    assert.ok(rb.ok, JSON.stringify(rb.error));
    assert.ok(statesB.includes("queued"), `the second tab's states: ${statesB}`);
    assert.equal(rb.result.sessionURL, ra.result.sessionURL, "one session");
    assert.deepEqual(await env.checkStored(name, size, 44), []);
    const log = await requests();
    assert.equal(log.filter((e) => e.method === "POST").length, 1, "one session started");
    const sent = log.filter((e) => e.method === "PUT").reduce((n, e) => n + Math.max(0, e.contentLength), 0);
    assert.equal(sent, size, "every byte sent once");
  } finally {
    await ref.config({ link: { bitsPerSecond: 0, rttMs: 0 } });
    await Promise.all([a.close(), b.close()]);
  }
});

test("a reload mid-upload with checksum crc32c: the resumed upload hashes what was sent again and the server agrees", async () => {
  const name = unique("crc");
  const url = ref.uploadURL(name);
  const size = 24 * MiB;
  const p = await env.openPage();
  try {
    const before = await p.evaluate(async (url) => {
      const mu = await T.load();
      const up = mu.upload(T.file(24 * 1024 * 1024, 45, "crc.bin"), { url, resume: true, chunkSize: 262144 * 8, checksum: "crc32c" });
      up.addEventListener("progress", (e) => e.confirmed >= 16 * 1024 * 1024 && up.pause());
      await T.until(() => up.state === "paused", 60_000, "paused");
      return up.sessionURL;
    }, url);
    await p.reload();
    await p.waitForFunction(() => window.T);
    await ref.clearLog();
    const out = await p.evaluate(async (url) => {
      // The status query's answer, then the first chunk: between them the bytes the server
      // holds are read from the File and hashed again.
      let query = null;
      let chunk = null;
      const r = await T.run(T.file(24 * 1024 * 1024, 45, "crc.bin"), { url, resume: true, chunkSize: 262144 * 8, checksum: "crc32c" }, {
        onStart: (up) => up.addEventListener("request", (e) => {
          if (e.contentRange.startsWith("bytes */")) query ??= performance.now();
          else chunk ??= performance.now() - e.ms; // when the chunk was sent
        }),
      });
      return { r, rehashMs: chunk - query };
    }, url);
    assert.ok(out.r.ok, JSON.stringify(out.r.error));
    assert.equal(out.r.result.sessionURL, before);
    assert.deepEqual(await env.checkStored(name, size, 45), []);
    const log = await requests();
    const chunks = log.filter((e) => e.method === "PUT" && !e.contentRange.startsWith("bytes */"));
    assert.ok(chunks.length > 0 && !chunks[0].contentRange.startsWith("bytes 0-"), `resumed at ${chunks[0]?.contentRange}`);
    console.log(
      `# crc32c after a reload: ${out.rehashMs.toFixed(0)} ms between the status query's answer and the next chunk, ` +
        `in which the 16 MiB the server held were read from the File and hashed again ` +
        `(${(16 * 1.048576 / (out.rehashMs / 1000)).toFixed(0)} MB/s)`,
    );
  } finally {
    await p.close();
  }
});
