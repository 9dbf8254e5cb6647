//go:build js && wasm

package jsbridge

import (
	"math/rand/v2"
	"syscall/js"
	"testing"
	"time"
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

// fakeHost installs a scripted host (the role of web/js/src/host.js) and returns it. Nothing
// goes to the network: respond(call) answers each send, with the arguments of the callback
// as an array (["ok", status, range, location, override, retryAfter, body], ["fetch", name,
// message], ["redirect"], ["hidden"]), or a promise of one, or null for "never answer" (until an abort,
// which answers ["fetch", "AbortError", "aborted"]). It records every call:
//
//	h.sends     [{id, method, url, headers: {...}, pre, start, end, post, session, timeoutMs}]
//	h.reads     [[id, start, end]]     h.aborts  [id]     h.events  [[id, type, ...args]]
//	h.open(id, {blob, sink, getHeaders}) as the loader does; h.size: the entries open
//	h.pending:  callbacks handed to the host and not answered yet
func fakeHost(t *testing.T, respond js.Value) js.Value {
	t.Helper()
	h := jsFunc("respond", `const entries = new Map();
	const h = { sends: [], reads: [], aborts: [], events: [], pending: 0 };
	const later = (id, e, cb, args) => { h.pending++; setTimeout(() => { h.pending--; if (entries.get(id) === e) cb(...args) }, 0) };
	h.open = (id, entry) => entries.set(id, { ...entry });
	Object.defineProperty(h, "size", { get: () => entries.size });
	h.send = (id, method, url, headers, pre, start, end, post, session, timeoutMs, cb) => {
		const e = entries.get(id);
		const hs = {};
		const f = headers === "" ? [] : headers.split("\n");
		for (let i = 0; i < f.length; i += 2) hs[f[i]] = f[i + 1];
		const call = { id, method, url, headers: hs, pre: pre ?? "", start, end, post: post ?? "", session, timeoutMs };
		h.sends.push(call);
		e.answer = (args) => { e.answer = null; later(id, e, cb, args) };
		Promise.resolve(respond(call)).then((a) => { if (a && e.answer) e.answer(a) });
	};
	h.abort = (id) => { h.aborts.push(id); entries.get(id)?.answer?.(["fetch", "AbortError", "aborted"]) };
	h.read = (id, start, end, cb) => {
		const e = entries.get(id);
		h.reads.push([id, start, end]);
		h.pending++;
		e.blob.slice(start, end).arrayBuffer().then((b) => { h.pending--; if (entries.get(id) === e) cb("ok", new Uint8Array(b)) });
	};
	h.headers = (id, cb) => {
		const e = entries.get(id);
		Promise.resolve().then(() => e.getHeaders()).then(
			(v) => later(id, e, cb, ["ok", Object.entries(v).flat().join("\n")]),
			(err) => later(id, e, cb, ["error", err.name, err.message]));
	};
	h.wantRequests = (id) => true;
	h.whenOnline = (id, cb) => later(id, entries.get(id), cb, ["ok"]);
	h.emit = (id, type, ...args) => {
		h.events.push([id, type, ...args]);
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
	deadline := time.Now().Add(2 * time.Second)
	for liveFuncs.Load() != want {
		if time.Now().After(deadline) {
			t.Fatalf("live js.Funcs: %d, want %d (a func was not released)", liveFuncs.Load(), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
