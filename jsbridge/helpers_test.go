//go:build js && wasm

package jsbridge

import (
	"math/rand/v2"
	"syscall/js"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// jsFunc compiles a JS function: jsFunc("a", "b", "return a+b").
func jsFunc(params ...string) js.Value {
	args := make([]any, len(params))
	for i, p := range params {
		args[i] = p
	}
	return js.Global().Get("Function").New(args...)
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(uint64(n), 42))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// blobOf returns a Blob holding a copy of b.
func blobOf(b []byte, typ string) js.Value {
	a := js.Global().Get("Uint8Array").New(len(b))
	js.CopyBytesToJS(a, b)
	opts := js.Global().Get("Object").New()
	opts.Set("type", typ)
	return js.Global().Get("Blob").New([]any{a}, opts)
}

// fakeHost installs a scripted host (the role of web/js/src/engine/host.js, whose contract it
// keeps) and returns it. Nothing goes to the network: respond(call) answers each send with an
// answer ({kind: "ok", status, range, location, override, retryAfter, body}, which it passes
// on as host.js does, as one string; {kind: "fetch",
// name, message}, {kind: "redirect", followed}, {kind: "hidden"}), or a promise of one, or null
// for "never answer" (until an abort, which answers {kind: "fetch", name: "AbortError"}). It
// records every call:
//
//	h.sends     [{id, method, url, headers: {...}, pre, start, end, post, session, timeoutMs, sent}]
//	h.hashes    [{id, kinds}]          h.digests [{id, n}]  (answered with h.sums: {crc32c, md5})
//	h.aborts    [id]                   h.events  [{id, type, ...fields}]
//	h.sessions  [{id, endpoint, size, type, metadata}]  (answered by the entry's session(ask))
//	h.open(id, {blob, sink, getHeaders}) as the loader does; h.size: the entries open
//	h.pending:  answers handed to the host and not given yet
func fakeHost(t *testing.T, respond js.Value) js.Value {
	t.Helper()
	h := jsFunc("respond", `const entries = new Map();
	const h = { sends: [], hashes: [], digests: [], sums: { crc32c: "", md5: "" }, aborts: [], events: [], sessions: [], pending: 0 };
	const wire = (a) => ["ok", a.status, a.range, a.location, a.override, a.retryAfter, a.body].map((v) => v ?? "").join("\n");
	const later = (id, e, answer, a) => { h.pending++; setTimeout(() => { h.pending--; if (entries.get(id) === e) answer(a) }, 0) };
	h.open = (id, entry) => entries.set(id, { ...entry });
	Object.defineProperty(h, "size", { get: () => entries.size });
	h.send = (id, method, url, lines, pre, start, end, post, session, timeoutMs, sent, answer) => {
		const e = entries.get(id);
		const headers = {};
		const parts = lines.split("\n");
		for (let i = 0; i + 1 < parts.length; i += 2) headers[parts[i]] = parts[i + 1];
		const call = { id, method, url, headers, pre: pre ?? "", start, end, post: post ?? "", session, timeoutMs, sent };
		h.sends.push(call);
		e.answer = (a) => { e.answer = null; later(id, e, answer, a.kind === "ok" ? wire(a) : a) };
		Promise.resolve(respond(call)).then((a) => { if (a && e.answer) e.answer(a) });
	};
	h.abort = (id) => { h.aborts.push(id); entries.get(id)?.answer?.({ kind: "fetch", name: "AbortError", message: "aborted" }) };
	h.hash = (id, kinds) => h.hashes.push({ id, kinds });
	h.digest = (id, n, answer) => { h.digests.push({ id, n }); later(id, entries.get(id), answer, { kind: "ok", ...h.sums }) };
	h.headers = (id, answer) => {
		const e = entries.get(id);
		Promise.resolve().then(() => e.getHeaders()).then(
			(v) => later(id, e, answer, { kind: "ok", headers: v }),
			(err) => later(id, e, answer, { kind: "error", name: err.name, message: err.message }));
	};
	// session: the entry's own session(ask) gives the answer ({kind: "ok", sessionURL, …}), or a
	// promise of one; null: never answered.
	h.session = (id, ask, answer) => {
		const e = entries.get(id);
		h.sessions.push({ id, ...ask });
		Promise.resolve().then(() => e.session(ask)).then((a) => a && later(id, e, answer, a));
	};
	h.wantRequests = (id) => true;
	h.whenOnline = (id, answer) => later(id, entries.get(id), answer, { kind: "ok" });
	// The fields of each report, in the order host.js's REPORT_FIELDS gives them.
	const fields = { state: ["state"], progress: ["loaded", "total", "confirmed", "bytesPerSecond", "secondsLeft"],
		retry: ["attempt", "delayMs", "status", "error", "restart"], session: ["url"],
		request: ["method", "url", "contentRange", "status", "ms", "error"], done: ["status", "body", "sessionURL"],
		checked: ["held", "complete"], fail: ["code", "message", "status", "responseText", "sessionURL", "reason", "serverMessage"] };
	h.report = (id, type, ...v) => {
		const r = { id, type };
		fields[type].forEach((name, i) => (r[name] = v[i]));
		h.events.push(r);
		if (type === "done" || type === "fail") entries.delete(id);
	};
	return h`).Invoke(respond)
	SetHost(h)
	return h
}

// bigBlob returns a Blob of n MiB made of references to one 1 MiB Blob: cheap to make.
func bigBlob(mib int) js.Value {
	return jsFunc("n", "const one = new Blob([new Uint8Array(1<<20)]); return new Blob(Array(n).fill(one))").Invoke(mib)
}

// settleFuncs waits until the count of live js.Funcs is back at want, or fails.
func settleFuncs(t *testing.T, want int64) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, want, liveFuncs.Load(), "live js.Funcs (a func was not released)")
	}, 2*time.Second, 5*time.Millisecond)
}
