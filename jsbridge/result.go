//go:build js && wasm

package jsbridge

import (
	"github.com/mediaupload/mediaupload/core"
)

// The reports go to the host as positional primitives (host.emit(id, type, ...)), never as
// objects: the loader builds the events and results, and every JS object Go makes is a
// reference that only Go's collector would end.

// fail reports err as the upload's end: emit("fail", code, message, status, responseText,
// sessionURL, null, reason, serverMessage). status, responseText, reason and serverMessage
// come from the last answer the error holds, if any (reason and serverMessage: Google's JSON
// error's); the null is the host's to fill with the JS error behind the failure.
func (c *conn) fail(err error, sessionURL string) {
	status, text, reason, message := 0, "", "", ""
	// The HTTPError may be inside a RetriesExhaustedError or a SessionExpiredError.
	if he, ok := core.Find[*core.HTTPError](err); ok {
		status, text, reason, message = he.Status, string(he.Body), he.Reason, he.Message
	} else if pe, ok := core.Find[*core.ProtocolError](err); ok {
		status = pe.Status
	}
	c.emit("fail", core.Code(err), err.Error(), status, text, sessionURL, nil, reason, message)
}

// progressArgs are the arguments of the progress report: loaded, total, confirmed,
// bytesPerSecond, secondsLeft (null where there is no estimate).
func progressArgs(p core.Progress) []any {
	var left any
	if p.SecondsLeft >= 0 {
		left = p.SecondsLeft
	}
	return []any{p.Loaded, p.Total, p.Confirmed, p.BytesPerSecond, left}
}

// retryArgs are the arguments of the retry report: attempt, delayMs, status, error, restart.
func retryArgs(r core.RetryInfo) []any {
	return []any{r.Attempt, ms(r.Delay), r.Status, errString(r.Err), r.Restart}
}

// requestArgs are the arguments of the request report: method, url, contentRange, status,
// ms, error (null when an answer arrived).
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
