//go:build js && wasm

package jsbridge

import (
	"github.com/mediaupload/mediaupload/core"
)

// The reports go to the host as primitives, the fields of each type in the order
// engine/host.js lists them (REPORT_FIELDS): the host and the loader build the events and
// results from them.

// fail reports err as the upload's end: {type: "fail", code, message, status, responseText,
// sessionURL, reason, serverMessage}. status, responseText, reason and serverMessage come
// from the last answer the error holds, if any (reason and serverMessage: Google's JSON
// error's; a backend's refusal: its status, answer and message); the host adds the JS error
// behind the failure as its cause.
func (c *conn) fail(err error, sessionURL string) {
	status, text, reason, message := 0, "", "", ""
	// The HTTPError may be inside a RetriesExhaustedError or a SessionExpiredError.
	if he, ok := core.Find[*core.HTTPError](err); ok {
		status, text, reason, message = he.Status, string(he.Body), he.Reason, he.Message
	} else if pe, ok := core.Find[*core.ProtocolError](err); ok {
		status = pe.Status
	} else if be, ok := core.Find[*core.BackendError](err); ok && be.Kind == core.BackendRefused {
		// The app's backend's refusal: its status, its answer and its JSON error's message.
		status, text, message = be.Status, string(be.Body), be.Message
	}
	c.report("fail", jsString(core.Code(err)), err.Error(), status, text, sessionURL, reason, message)
}

// progressReport is the progress report's fields; secondsLeft is null where there is no
// estimate.
func progressReport(p core.Progress) []any {
	var left any
	if p.SecondsLeft >= 0 {
		left = p.SecondsLeft
	}
	return []any{p.Loaded, p.Total, p.Confirmed, p.BytesPerSecond, left}
}

// retryReport is the retry report's fields.
func retryReport(r core.RetryInfo) []any {
	return []any{r.Attempt, ms(r.Delay), r.Status, errString(r.Err), r.Restart}
}

// requestReport is the request report's fields; error is null when an answer arrived.
func requestReport(r core.RequestInfo) []any {
	return []any{jsString(r.Method), r.URL, r.ContentRange, r.Status, ms(r.Duration), errString(r.Err)}
}

func ms(d core.Duration) float64 { return float64(d) / float64(core.Millisecond) }

func errString(err error) any {
	if err == nil {
		return nil
	}
	return err.Error()
}
