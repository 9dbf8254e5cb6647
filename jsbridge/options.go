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
// option that is undefined or null takes its default. getHeaders is true where the caller
// gave one: the host keeps the function, and gh asks it (conn.headers).
func Options(o js.Value, typ string, gh func(core.Context) (core.Header, error)) (opts core.Options, err error) {
	switch o.Type() {
	case js.TypeUndefined, js.TypeNull:
		o = js.Global().Get("Object").New()
	case js.TypeObject:
	default:
		return opts, bad("options", "not an object")
	}
	opts.Clock = Clock{}
	str := func(name string, dst *string) {
		if err == nil {
			*dst, err = optString(o, name)
		}
	}
	flag := func(name string, dst *bool, def bool) {
		if err == nil {
			*dst, err = optBool(o, name, def)
		}
	}
	var utype string
	str("url", &opts.URL)
	str("method", &opts.Method)
	str("uploadType", &utype)
	str("contentType", &opts.ContentType)
	str("sessionURL", &opts.SessionURL)
	str("origin", &opts.Origin) // the page's, for messages (the loader sets it)
	flag("queryStatusEachChunk", &opts.QueryStatusEachChunk, false)
	// On unless the caller says false: a browser's fetch cannot read every 308 in every
	// engine (Firefox hands over none in redirect mode "error"), and with this header the
	// server answers 200 + X-HTTP-Status-Code-Override, which every engine reads (PROTOCOL.md
	// section 6). Google's own clients send it always.
	flag("noRedirect308", &opts.NoRedirect308, true)
	if err != nil {
		return opts, err
	}
	if opts.URL == "" && opts.SessionURL == "" {
		return opts, bad("url", "missing")
	}
	opts.Type = core.Type(utype)
	if opts.ContentType == "" {
		opts.ContentType = typ // core's default, octet-stream, where empty
	}
	var v [8]js.Value
	for i, name := range [...]string{"chunkSize", "metadata", "headers", "getHeaders", "retry", "checksum", "maxChunkSize", "stallTimeoutMs"} {
		if v[i], err = get(o, name); err != nil {
			return opts, bad(name, err.Error())
		}
	}
	if opts.ChunkSize, err = chunkSize(v[0]); err != nil {
		return opts, err
	}
	if set(v[6]) {
		n, ok := integer(v[6])
		if !ok || n == 0 || n%core.ChunkAlign != 0 {
			return opts, bad("maxChunkSize", "must be a positive multiple of 262144")
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
	opts.Checksum, err = checksum(v[5])
	return opts, err
}

func bad(field, reason string) error { return &core.ArgumentError{Field: field, Reason: reason} }

// set reports whether an option was given: undefined and null mean "the default".
func set(v js.Value) bool { return !v.IsUndefined() && !v.IsNull() }

var reflectGet = js.Global().Get("Reflect").Get("get")

// get returns o[name] for an object the caller gave. A plain js.Value.Get would let a
// throwing getter (or a Proxy) unwind through the Go runtime; through Reflect.get the
// exception is an error.
func get(o js.Value, name string) (v js.Value, err error) {
	err = try(func() { v = reflectGet.Invoke(o, name) })
	return v, err
}

func optString(o js.Value, name string) (string, error) {
	v, err := get(o, name)
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

func optBool(o js.Value, name string, def bool) (bool, error) {
	v, err := get(o, name)
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

// integer returns v as a non-negative integer below 2^53, or ok false.
func integer(v js.Value) (int64, bool) {
	if v.Type() != js.TypeNumber {
		return 0, false
	}
	f := v.Float()
	if f != math.Trunc(f) || f < 0 || f > 1<<53 { // NaN and ±Inf fail too
		return 0, false
	}
	return int64(f), true
}

// chunkSize reads chunkSize: "auto" (the default: sized to the link), a positive multiple of
// 262144 (fixed), or 0 (the rest in one PUT).
func chunkSize(v js.Value) (int64, error) {
	if !set(v) || (v.Type() == js.TypeString && v.String() == "auto") {
		return core.ChunkAuto, nil
	}
	n, ok := integer(v)
	if !ok || n%core.ChunkAlign != 0 {
		return 0, bad("chunkSize", "must be \"auto\", a positive multiple of 262144, or 0 for the whole rest")
	}
	return n, nil
}

// isPlainObject reports whether v is an object literal (or Object.create(null)), not an
// array, a Date, a Blob, ...
func isPlainObject(v js.Value) bool {
	if v.Type() != js.TypeObject {
		return false
	}
	obj := js.Global().Get("Object")
	var proto js.Value
	if try(func() { proto = obj.Call("getPrototypeOf", v) }) != nil { // a Proxy's trap threw
		return false
	}
	return proto.IsNull() || proto.Equal(obj.Get("prototype"))
}

// metadata returns the JSON text of a plain object, made by the browser's JSON.
func metadata(v js.Value) ([]byte, error) {
	if !set(v) {
		return nil, nil
	}
	if !isPlainObject(v) {
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
	if err := try(func() { entries = js.Global().Get("Object").Call("entries", v) }); err != nil {
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
		n, ok := integer(r)
		if !ok || n > 1000 {
			return nil, bad("retry.retries", "not a non-negative integer")
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
		ms, ok := integer(r)
		if !ok || ms > int64(core.MaxSingleDelay/core.Millisecond) {
			return nil, bad("retry."+f.name, "must be a whole number of milliseconds from 0 to 60000")
		}
		*f.dst = core.Duration(ms) * core.Millisecond
	}
	return &p, nil
}

// checksum accepts the values of docs/api.md; all but false are a later issue's.
func checksum(v js.Value) (core.Checksum, error) {
	if !set(v) || (v.Type() == js.TypeBoolean && !v.Bool()) {
		return core.NoChecksum, nil
	}
	if v.Type() == js.TypeString {
		switch c := core.Checksum(v.String()); c {
		case core.CRC32C, core.MD5, core.Both:
			return c, nil
		}
	}
	return "", bad("checksum", `must be false, "crc32c", "md5" or "both"`)
}
