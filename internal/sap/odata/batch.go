package odata

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
)

// Op is one request inside a $batch: Path is relative to the service
// (e.g. "A_BusinessPartner('1')"), Body a JSON entity for writes.
type Op struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// BatchPart is either a read (Read) or a changeset: writes SAP applies all or none of.
type BatchPart struct {
	Read      *Op
	Changeset []Op
}

// OpResult is the answer to one op; Err is the Gateway error when Status >= 400.
type OpResult struct {
	Status int
	Header http.Header
	Body   []byte
	Err    *Error
}

// PartResult answers one BatchPart. A changeset that failed comes back as a single result
// with Err set (SAP rolls the whole changeset back).
type PartResult struct {
	Results []OpResult
}

// Failed is the part's Gateway error, if any.
func (p PartResult) Failed() *Error {
	for _, r := range p.Results {
		if r.Err != nil {
			return r.Err
		}
	}
	return nil
}

func newBoundary(prefix string) string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// BuildBatch writes a $batch body (multipart/mixed, CRLF lines) and returns it with its
// Content-Type.
func BuildBatch(parts []BatchPart) (contentType string, body []byte, err error) {
	boundary := newBoundary("batch_")
	var buf bytes.Buffer
	for i, p := range parts {
		if (p.Read == nil) == (len(p.Changeset) == 0) {
			return "", nil, &Error{Kind: ErrBadInput, Message: fmt.Sprintf("batch part %d must be a read or a changeset", i)}
		}
		fmt.Fprintf(&buf, "--%s\r\n", boundary)
		if p.Read != nil {
			if p.Read.Method != http.MethodGet {
				return "", nil, &Error{Kind: ErrBadInput, Message: fmt.Sprintf("batch part %d: only GET may stand outside a changeset", i)}
			}
			writeOp(&buf, *p.Read)
			continue
		}
		cs := newBoundary("changeset_")
		fmt.Fprintf(&buf, "Content-Type: multipart/mixed; boundary=%s\r\n\r\n", cs)
		for _, op := range p.Changeset {
			if op.Method == http.MethodGet {
				return "", nil, &Error{Kind: ErrBadInput, Message: fmt.Sprintf("batch part %d: GET may not be in a changeset", i)}
			}
			fmt.Fprintf(&buf, "--%s\r\n", cs)
			writeOp(&buf, op)
		}
		fmt.Fprintf(&buf, "--%s--\r\n\r\n", cs)
	}
	fmt.Fprintf(&buf, "--%s--\r\n", boundary)
	return "multipart/mixed; boundary=" + boundary, buf.Bytes(), nil
}

func writeOp(buf *bytes.Buffer, op Op) {
	buf.WriteString("Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n")
	fmt.Fprintf(buf, "%s %s HTTP/1.1\r\n", op.Method, op.Path)
	h := op.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	if h.Get("Accept") == "" {
		h.Set("Accept", "application/json")
	}
	if len(op.Body) > 0 {
		if h.Get("Content-Type") == "" {
			h.Set("Content-Type", "application/json")
		}
		h.Set("Content-Length", strconv.Itoa(len(op.Body)))
	}
	_ = h.Write(buf) // a bytes.Buffer does not fail
	buf.WriteString("\r\n")
	buf.Write(op.Body)
	buf.WriteString("\r\n")
}

// ParseBatchResponse reads a $batch answer (multipart/mixed; LF or CRLF lines) into one
// PartResult per part, in order.
func ParseBatchResponse(contentType string, body []byte) ([]PartResult, error) {
	boundary, err := boundaryOf(contentType)
	if err != nil {
		return nil, err
	}
	var out []PartResult
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, &Error{Kind: ErrMalformed, Message: "$batch answer: " + err.Error()}
		}
		ct := part.Header.Get("Content-Type")
		if strings.HasPrefix(strings.ToLower(ct), "multipart/mixed") {
			data, err := io.ReadAll(part)
			if err != nil {
				return nil, &Error{Kind: ErrMalformed, Message: "$batch changeset: " + err.Error()}
			}
			sub, err := ParseBatchResponse(ct, data)
			if err != nil {
				return nil, err
			}
			var pr PartResult
			for _, s := range sub {
				pr.Results = append(pr.Results, s.Results...)
			}
			out = append(out, pr)
			continue
		}
		r, err := parseEmbeddedResponse(part)
		if err != nil {
			return nil, err
		}
		out = append(out, PartResult{Results: []OpResult{r}})
	}
}

func boundaryOf(contentType string) (string, error) {
	b, ok := MultipartBoundary(contentType)
	if !ok {
		return "", &Error{Kind: ErrMalformed, Message: "$batch answer is not multipart/mixed: " + contentType}
	}
	return b, nil
}

// MultipartBoundary is the boundary of a multipart Content-Type ($batch and its changesets);
// ok is false for any other type or one without a boundary.
func MultipartBoundary(contentType string) (string, bool) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || !strings.HasPrefix(mt, "multipart/") || params["boundary"] == "" {
		return "", false
	}
	return params["boundary"], true
}

// parseEmbeddedResponse reads "HTTP/1.1 400 Bad Request", headers and body. The embedded
// Content-Length is ignored: SAP counts it before line endings may change on the way.
func parseEmbeddedResponse(r io.Reader) (OpResult, error) {
	tp := textproto.NewReader(bufio.NewReader(r))
	line, err := tp.ReadLine()
	if err != nil {
		return OpResult{}, &Error{Kind: ErrMalformed, Message: "$batch part has no status line"}
	}
	_, rest, _ := strings.Cut(line, " ")
	codeText, _, _ := strings.Cut(rest, " ")
	status, err := strconv.Atoi(codeText)
	if !strings.HasPrefix(line, "HTTP/") || err != nil {
		return OpResult{}, &Error{Kind: ErrMalformed, Message: "$batch part status line: " + line}
	}
	mh, err := tp.ReadMIMEHeader()
	if err != nil && !errors.Is(err, io.EOF) {
		return OpResult{}, &Error{Kind: ErrMalformed, Message: "$batch part headers: " + err.Error()}
	}
	body, _ := io.ReadAll(tp.R)
	res := OpResult{Status: status, Header: http.Header(mh), Body: bytes.TrimRight(body, "\r\n")}
	if status >= 400 {
		res.Err = ParseGatewayError(status, res.Body)
	}
	return res, nil
}

// Batch sends parts as one $batch (POST, with the CSRF token) and parses the answer.
func (c *Client) Batch(ctx context.Context, creds Credentials, service string, parts []BatchPart) ([]PartResult, error) {
	ct, body, err := BuildBatch(parts)
	if err != nil {
		return nil, err
	}
	resp, err := c.do(ctx, creds, request{method: http.MethodPost, service: service, rel: "$batch", body: body,
		header: http.Header{"Content-Type": {ct}, "Accept": {"multipart/mixed"}}})
	if err != nil {
		return nil, err
	}
	res, err := ParseBatchResponse(resp.Header.Get("Content-Type"), resp.Body)
	if err != nil {
		return nil, err
	}
	if len(res) != len(parts) {
		return res, &Error{Kind: ErrMalformed, Message: fmt.Sprintf("$batch answered %d parts for %d sent", len(res), len(parts))}
	}
	return res, nil
}
