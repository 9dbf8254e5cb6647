//go:build js && wasm

package jsbridge

import (
	"errors"
	"math"
	"syscall/js"

	"github.com/mediaupload/mediaupload/core"
)

// Options converts the loader's plain copy of the options of docs/api.md into core.Options
// for an upload of a Blob of type typ. Every bad argument is an
// *core.ArgumentError ("invalid_argument"), found here or by core.New, before any request.
// Options the loader handles (signal, resume, the callbacks) and unknown keys are ignored. An
// option that is undefined, null or not an own enumerable property (the copy has only those)
// takes its default. getHeaders is true where the caller gave one: the host keeps the
// function, and gh asks it (conn.headers). session is the caller's endpoint URL, or
// sessionFunction true where the caller gave a function (the host keeps it); sess asks the
// backend either way (conn.session).
func Options(o js.Value, typ string, gh func(core.Context) (core.Header, error), sess func(endpoint string) core.SessionFunc) (opts core.Options, err error) {
	switch o.Type() {
	case js.TypeUndefined, js.TypeNull:
		o = objectCtor.New()
	case js.TypeObject:
	default:
		return opts, bad("options", "not an object")
	}
	opts.Clock = Clock{}
	// Only the options given are read: a default upload gives two or three of the seventeen,
	// and each read is a call into JS.
	var keys string
	if err := try(func() { keys = objectCtor.Call("keys", o).Call("join", jsString("\n")).String() }); err != nil {
		return opts, bad("options", err.Error()) // a Proxy's ownKeys that throws
	}
	read := func(name string) (js.Value, error) {
		if !hasLine(keys, name) {
			return js.Undefined(), nil
		}
		return get(o, name)
	}
	str := func(name string, dst *string) {
		if err == nil {
			*dst, err = optString(read, name)
		}
	}
	flag := func(name string, dst *bool, def bool) {
		if err == nil {
			*dst, err = optBool(read, name, def)
		}
	}
	var utype string
	str("url", &opts.URL)
	str("method", &opts.Method)
	str("uploadType", &utype)
	str("contentType", &opts.ContentType)
	str("sessionURL", &opts.SessionURL)
	str("origin", &opts.Origin)                   // the page's, for messages (the loader sets it)
	flag("sessionKept", &opts.SessionKept, false) // the loader's: a session resume: true kept
	flag("queryStatusEachChunk", &opts.QueryStatusEachChunk, false)
	// On unless the caller says false: a browser's fetch cannot read every 308 in every
	// engine (Firefox hands over none in redirect mode "error"), and with this header the
	// server answers 200 + X-HTTP-Status-Code-Override, which every engine reads (docs/protocol.md
	// section 6). Google's own clients send it always.
	flag("noRedirect308", &opts.NoRedirect308, true)
	if err != nil {
		return opts, err
	}
	opts.Type = core.Type(utype)
	if opts.ContentType == "" {
		opts.ContentType = typ // core's default, octet-stream, where empty
	}
	var v [9]js.Value
	for i, name := range [...]string{"chunkSize", "metadata", "headers", "getHeaders", "retry", "checksum", "maxChunkSize", "stallTimeoutMs", "progressIntervalMs"} {
		if v[i], err = read(name); err != nil {
			return opts, bad(name, err.Error())
		}
	}
	if opts.ChunkSize, err = chunkSize(v[0]); err != nil {
		return opts, err
	}
	if set(v[6]) {
		n, ok := wholeNumber(v[6])
		if !ok {
			return opts, bad("maxChunkSize", "not a whole number")
		}
		if n == 0 {
			n = -1 // an explicit 0 is no size: core's 0 would mean its default
		}
		opts.MaxChunkSize = n
	}
	if set(v[7]) {
		// A request unanswered this long is a lost connection; 0: never; absent: a bound
		// derived from the request's size and the rate so far (core/offline.go).
		ms := v[7]
		if ms.Type() != js.TypeNumber || !(ms.Float() >= 0) || ms.Float() > 1<<53 {
			return opts, bad("stallTimeoutMs", "must be a number of milliseconds, 0 for never")
		}
		opts.StallTimeout = core.Duration(ms.Float() * float64(core.Millisecond))
		if opts.StallTimeout == 0 {
			opts.StallTimeout = -1
		}
	}
	if set(v[8]) {
		// The longest gap between progress reports the page bears (core's ChunkSizer.Interval);
		// core checks the value: an explicit 0 goes as a negative, which it refuses.
		ms := v[8]
		if ms.Type() != js.TypeNumber || math.IsNaN(ms.Float()) || ms.Float() > 1<<53 {
			return opts, bad("progressIntervalMs", "must be a number of milliseconds")
		}
		opts.ProgressInterval = core.Duration(ms.Float() * float64(core.Millisecond))
		if opts.ProgressInterval == 0 {
			opts.ProgressInterval = -1
		}
	}
	if opts.Metadata, err = metadata(v[1]); err != nil {
		return opts, err
	}
	if opts.Header, err = header(v[2], "headers"); err != nil {
		return opts, err
	}
	if opts.GetHeader, err = getHeaders(v[3], gh); err != nil {
		return opts, err
	}
	if opts.Retry, err = retry(v[4]); err != nil {
		return opts, err
	}
	if opts.Session, opts.SessionEndpoint, err = session(read, sess); err != nil {
		return opts, err
	}
	opts.Checksum, err = checksum(v[5])
	return opts, err
}

// session converts session: the endpoint's URL (core checks it), or sessionFunction true where
// the caller gave a function; anything else the caller gave as session is a bad argument.
func session(read func(string) (js.Value, error), sess func(string) core.SessionFunc) (core.SessionFunc, string, error) {
	fn, err := optBool(read, "sessionFunction", false)
	if err != nil {
		return nil, "", err
	}
	v, err := read("session")
	switch {
	case err != nil:
		return nil, "", bad("session", err.Error())
	case fn && !set(v):
		return sess(""), "", nil
	case !set(v):
		return nil, "", nil
	case fn || v.Type() != js.TypeString:
		return nil, "", bad("session", "not a function (that asks your backend for a session) or the URL of your backend's endpoint")
	}
	return sess(v.String()), v.String(), nil
}

func bad(field, reason string) error { return &core.ArgumentError{Field: field, Reason: reason} }

// set reports whether an option was given: undefined and null mean "the default".
func set(v js.Value) bool { return !v.IsUndefined() && !v.IsNull() }

var (
	reflectGet = js.Global().Get("Reflect").Get("get")
	objectCtor = js.Global().Get("Object")
)

// hasLine reports whether name is one of the lines of keys (names joined by line breaks).
func hasLine(keys, name string) bool {
	for len(keys) >= len(name) {
		if keys[:len(name)] == name && (len(keys) == len(name) || keys[len(name)] == '\n') {
			return true
		}
		i := 0
		for i < len(keys) && keys[i] != '\n' {
			i++
		}
		if i == len(keys) {
			break
		}
		keys = keys[i+1:]
	}
	return false
}

// get returns o[name] for an object the caller gave. A plain js.Value.Get would let a
// throwing getter (or a Proxy) unwind through the Go runtime; through Reflect.get the
// exception is an error. (The option names are made JS strings once: jsString.)
func get(o js.Value, name string) (v js.Value, err error) {
	err = try(func() { v = reflectGet.Invoke(o, jsString(name)) })
	return v, err
}

func optString(read func(string) (js.Value, error), name string) (string, error) {
	v, err := read(name)
	if err != nil {
		return "", bad(name, err.Error())
	}
	if !set(v) {
		return "", nil
	}
	if v.Type() != js.TypeString {
		return "", bad(name, "not a string")
	}
	return v.String(), nil
}

func optBool(read func(string) (js.Value, error), name string, def bool) (bool, error) {
	v, err := read(name)
	if err != nil {
		return false, bad(name, err.Error())
	}
	if !set(v) {
		return def, nil
	}
	if v.Type() != js.TypeBoolean {
		return false, bad(name, "not a boolean")
	}
	return v.Bool(), nil
}

// wholeNumber returns v as an integer of at most 2^53 either way, or ok false: the numbers a
// JS value holds exactly. Whether its value is allowed is core's to say.
func wholeNumber(v js.Value) (int64, bool) {
	if v.Type() != js.TypeNumber {
		return 0, false
	}
	f := v.Float()
	if f != math.Trunc(f) || math.Abs(f) > 1<<53 { // NaN and ±Inf fail too
		return 0, false
	}
	return int64(f), true
}

// chunkSize converts chunkSize: "auto" (the default) or a number (core checks which).
func chunkSize(v js.Value) (int64, error) {
	if !set(v) || (v.Type() == js.TypeString && v.String() == "auto") {
		return core.ChunkAuto, nil
	}
	n, ok := wholeNumber(v)
	if !ok {
		return 0, bad("chunkSize", `not "auto" or a whole number`)
	}
	return n, nil
}

// metadata returns the JSON text of an object, made by the browser's JSON. (That it is a plain
// object, no Date or Map, the JS package checks on the caller's own value: upload.js; here is
// its copy.)
func metadata(v js.Value) ([]byte, error) {
	if !set(v) {
		return nil, nil
	}
	if v.Type() != js.TypeObject {
		return nil, bad("metadata", "not a plain object")
	}
	var s js.Value
	if err := try(func() { s = js.Global().Get("JSON").Call("stringify", v) }); err != nil || s.Type() != js.TypeString {
		if err == nil {
			err = errors.New("JSON.stringify gave no text") // a toJSON returning undefined
		}
		return nil, bad("metadata", "cannot be sent as JSON: "+err.Error()) // a cycle, a BigInt
	}
	return []byte(s.String()), nil
}

// header reads an object of string values (headers, or what getHeaders returned).
func header(v js.Value, field string) (core.Header, error) {
	if !set(v) {
		return nil, nil
	}
	var isArray bool
	if v.Type() != js.TypeObject || try(func() { isArray = js.Global().Get("Array").Call("isArray", v).Bool() }) != nil || isArray {
		return nil, bad(field, "not an object of strings")
	}
	var entries js.Value
	if err := try(func() { entries = objectCtor.Call("entries", v) }); err != nil {
		return nil, bad(field, err.Error()) // a throwing getter
	}
	h := core.Header{}
	for i, n := 0, entries.Length(); i < n; i++ {
		kv := entries.Index(i)
		k, val := kv.Index(0).String(), kv.Index(1)
		if val.Type() != js.TypeString {
			return nil, bad(field, "the value of \""+k+"\" is not a string")
		}
		h.Set(k, val.String())
	}
	return h, nil
}

// getHeaders returns gh where the caller gave a getHeaders function (the loader's copy of the
// options says true; the function itself stays with the host).
func getHeaders(v js.Value, gh func(core.Context) (core.Header, error)) (func(core.Context) (core.Header, error), error) {
	if !set(v) || (v.Type() == js.TypeBoolean && !v.Bool()) {
		return nil, nil
	}
	if v.Type() != js.TypeBoolean {
		return nil, bad("getHeaders", "not a function")
	}
	return gh, nil
}

// retry reads {retries, initialDelayMs, maxDelayMs, jitterMs} over core.DefaultRetryPolicy.
func retry(v js.Value) (*core.RetryPolicy, error) {
	p := core.DefaultRetryPolicy()
	if !set(v) {
		return &p, nil
	}
	if v.Type() != js.TypeObject {
		return nil, bad("retry", "not an object")
	}
	r, err := get(v, "retries")
	if err != nil {
		return nil, bad("retry", err.Error())
	}
	if set(r) {
		n, ok := wholeNumber(r)
		if !ok {
			return nil, bad("retry.retries", "not a whole number")
		}
		p.Retries = int(n)
	}
	for _, f := range []struct {
		name string
		dst  *core.Duration
	}{{"initialDelayMs", &p.InitialDelay}, {"maxDelayMs", &p.MaxDelay}, {"jitterMs", &p.Jitter}} {
		r, err := get(v, f.name)
		if err != nil {
			return nil, bad("retry", err.Error())
		}
		if !set(r) {
			continue
		}
		ms, ok := wholeNumber(r)
		if !ok {
			return nil, bad("retry."+f.name, "not a whole number of milliseconds")
		}
		*f.dst = core.Duration(ms) * core.Millisecond
	}
	return &p, nil
}

// checksum converts checksum: absent is core's default (ChecksumAuto: CRC32C for Cloud
// Storage), false is none, a string is core's to check.
func checksum(v js.Value) (core.Checksum, error) {
	if !set(v) {
		return core.ChecksumAuto, nil
	}
	if v.Type() == js.TypeBoolean && !v.Bool() {
		return core.NoChecksum, nil
	}
	if v.Type() != js.TypeString {
		return "", bad("checksum", `not false or a string ("crc32c", "md5" or "both")`)
	}
	return core.Checksum(v.String()), nil
}
