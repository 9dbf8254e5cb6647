//go:build js && wasm

package jsbridge

import (
	"syscall/js"

	"github.com/mediaupload/mediaupload/core"
)

// resultValue is what up.promise resolves with (shared/API.md): {status, metadata, body,
// sessionURL}; metadata is the body parsed by the browser's JSON, or null.
func resultValue(r *core.Result) js.Value {
	o := js.Global().Get("Object").New()
	body := string(r.Body)
	o.Set("status", r.Status)
	o.Set("metadata", parseJSON(body))
	o.Set("body", body)
	o.Set("sessionURL", nullIfEmpty(r.SessionURL))
	return o
}

// parseJSON returns JSON.parse(s), or null where s is empty or not JSON.
func parseJSON(s string) js.Value {
	v := js.Null()
	if s != "" {
		if err := try(func() { v = js.Global().Get("JSON").Call("parse", s) }); err != nil {
			v = js.Null()
		}
	}
	return v
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// failureValue is what sink.fail gets: {code, message, status, responseText, sessionURL}.
// status and responseText come from the last answer the error holds, if any.
func failureValue(err error, sessionURL string) js.Value {
	o := js.Global().Get("Object").New()
	status, text := 0, ""
	// The HTTPError may be inside a RetriesExhaustedError or a SessionExpiredError.
	if he, ok := core.Find[*core.HTTPError](err); ok {
		status, text = he.Status, string(he.Body)
	} else if pe, ok := core.Find[*core.ProtocolError](err); ok {
		status = pe.Status
	}
	o.Set("code", core.Code(err))
	o.Set("message", err.Error())
	o.Set("status", status)
	o.Set("responseText", text)
	o.Set("sessionURL", nullIfEmpty(sessionURL))
	return o
}

func fail(sink js.Value, err error, sessionURL string) {
	tell(sink, "fail", failureValue(err, sessionURL))
}

// progressArgs are the arguments of sink.progress: loaded, total, confirmed, bytesPerSecond,
// secondsLeft (null where there is no estimate). Positional, not an object: the loader builds
// the event, and every JS call made from Go costs time on every chunk.
func progressArgs(p core.Progress) []any {
	var left any
	if p.SecondsLeft >= 0 {
		left = p.SecondsLeft
	}
	return []any{p.Loaded, p.Total, p.Confirmed, p.BytesPerSecond, left}
}

func retryValue(r core.RetryInfo) js.Value {
	o := js.Global().Get("Object").New()
	o.Set("attempt", r.Attempt)
	o.Set("delayMs", ms(r.Delay))
	o.Set("status", r.Status)
	o.Set("error", errString(r.Err))
	return o
}

// requestArgs are the arguments of sink.request: method, url, contentRange, status, ms, error
// (null when an answer arrived).
func requestArgs(r core.RequestInfo) []any {
	return []any{r.Method, r.URL, r.ContentRange, r.Status, ms(r.Duration), errString(r.Err)}
}

func ms(d core.Duration) float64 { return float64(d) / float64(core.Millisecond) }

func errString(err error) any {
	if err == nil {
		return nil
	}
	return err.Error()
}
