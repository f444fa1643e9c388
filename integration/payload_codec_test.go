package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/history/v1"
	"go.temporal.io/api/proxy"
	"go.temporal.io/sdk/converter"
	sdkworker "go.temporal.io/sdk/worker"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/sapagent/sapagent/api/ops"
	"github.com/sapagent/sapagent/internal/config"
	"github.com/sapagent/sapagent/internal/devstack"
	"github.com/sapagent/sapagent/internal/payloadcodec"
	"github.com/sapagent/sapagent/internal/secrets"
	"github.com/sapagent/sapagent/internal/tools"
	"github.com/sapagent/sapagent/workflows"
)

// payloadsOf lists a history's payloads (search attributes aside: they stay readable on purpose).
func payloadsOf(t testing.TB, h *history.History) []*commonpb.Payload {
	var out []*commonpb.Payload
	require.NoError(t, proxy.VisitPayloads(context.Background(), h, proxy.VisitPayloadsOptions{
		SkipSearchAttributes: true,
		Visitor: func(_ *proxy.VisitPayloadsContext, ps []*commonpb.Payload) ([]*commonpb.Payload, error) {
			out = append(out, ps...)
			return ps, nil
		},
	}))
	return out
}

func historyBytes(t testing.TB, h *history.History) []byte {
	raw, err := proto.Marshal(h)
	require.NoError(t, err)
	return raw
}

// codecCall posts payloads to the codec endpoint; header sets extra request headers.
func (e *env) codecCall(op string, payloads []*commonpb.Payload, header http.Header) (int, []byte, http.Header) {
	e.t.Helper()
	body, err := protojson.Marshal(&commonpb.Payloads{Payloads: payloads})
	require.NoError(e.t, err)
	req, err := http.NewRequest("POST", e.stack.APIURL+"/api/codec/"+op+"?preserveStorageRefs=true", bytes.NewReader(body))
	require.NoError(e.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Namespace", e.cfg.TemporalNamespace)
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(e.t, err)
	return resp.StatusCode, raw, resp.Header
}

func bearer(tok string) http.Header { return http.Header{"Authorization": {"Bearer " + tok}} }

// What a user says to an agent, what tools are called with and what they return is not
// readable in Temporal: an operator sees it only through the codec endpoint, and only an
// operator. Rotating PAYLOAD_KEY keeps running conversations (encrypted under the old key) going.
func TestConversationContentIsEncryptedInTemporal(t *testing.T) {
	t.Parallel()
	e := startEnv(t, func(c *config.Config, o *devstack.Options) {
		c.Operators = []string{"ops-1"}
		o.OfflineLLM.Rules = devstack.DemoRules()
	})
	require.Equal(t, http.StatusOK, e.do("PUT", "/api/workspaces/"+e.ws+"/tool-policy", map[string]any{"policy": "run_everything"}, nil))
	agent := e.createAgent("")
	ws := e.dial(agent.ID, "")
	ws.next(5 * time.Second)
	title, body := "Zebra"+randomSuffix(), "Okapi"+randomSuffix()
	message := "save a note titled " + title + ": " + body
	evs := turn(t, e, ws, agent.ID, message)
	require.Len(t, toolEvents(t, evs, "tool_update"), 1, "save_note ran")
	evs = turn(t, e, ws, agent.ID, "list my notes")
	require.Len(t, toolEvents(t, evs, "tool_update"), 1, "list_notes ran")

	c, codec := e.stack.Deps.Temporal, e.stack.Deps.Codec
	wfID := workflows.ConversationWorkflowID(agent.ID)
	raw := rawHistory(t, c, wfID, "")
	rawBytes := historyBytes(t, raw)
	// The message text, the tool arguments (title, body) and the tool results (list_notes
	// returns the body) are all absent from what Temporal stores.
	for _, secret := range []string{message, title, body} {
		assert.False(t, bytes.Contains(rawBytes, []byte(secret)), "%q is readable in the raw history", secret)
	}
	payloads := payloadsOf(t, raw)
	require.Greater(t, len(payloads), 10)
	for _, p := range payloads {
		require.Equal(t, payloadcodec.Encoding, string(p.Metadata["encoding"]), "every payload is encrypted")
		require.Equal(t, codec.CurrentKeyID(), string(p.Metadata[payloadcodec.MetadataKeyID]))
	}
	// IDs and type names stay readable: operators still find the conversation.
	assert.True(t, bytes.Contains(rawBytes, []byte(workflows.ConversationWorkflowName)))

	// Decoded with the codec, the content is there, and the decoded history replays with the
	// SDK's default converter (what the recorder writes to workflows/testdata).
	decoded := decodedHistory(t, c, codec, wfID, "")
	plain := historyBytes(t, decoded)
	for _, secret := range []string{message, title, body} {
		assert.True(t, bytes.Contains(plain, []byte(secret)), "%q missing from the decoded history", secret)
	}
	r := sdkworker.NewWorkflowReplayer()
	workflows.RegisterWorkflows(r, tools.Default())
	require.NoError(t, r.ReplayWorkflowHistory(nil, decoded))

	// The codec endpoint: nobody without a token, no non-operator, an operator yes.
	status, out, _ := e.codecCall("decode", payloads, nil)
	assert.Equal(t, http.StatusUnauthorized, status)
	assert.Contains(t, string(out), `"code":"unauthorized"`)
	status, out, _ = e.codecCall("decode", payloads, bearer(e.token))
	assert.Equal(t, http.StatusForbidden, status, "alice owns the workspace but is no operator")
	assert.Contains(t, string(out), `"code":"forbidden"`)
	assert.NotContains(t, string(out), body)
	status, out, _ = e.codecCall("decode", payloads, bearer(e.tokenFor("ops-1")))
	require.Equal(t, http.StatusOK, status, "%s", out)
	assert.Contains(t, decodedText(t, out), body)
	// A tampered payload is a 400 that says so, not a 500 and not garbage.
	tampered := proto.Clone(payloads[0]).(*commonpb.Payload)
	tampered.Data[len(tampered.Data)-1] ^= 1
	status, out, _ = e.codecCall("decode", []*commonpb.Payload{tampered}, bearer(e.tokenFor("ops-1")))
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, string(out), `"code":"invalid_payload"`)
	status, _, _ = e.codecCall("decode", payloads[:1], http.Header{"Authorization": {"Bearer " + e.tokenFor("ops-1")}, "X-Namespace": {"someone-else"}})
	assert.Equal(t, http.StatusBadRequest, status)

	// Rotation: a new current key, the old one kept for decryption. The restarted worker
	// replays the conversation written under the old key and the conversation goes on.
	oldKey, oldID := e.stack.Deps.Config.PayloadKey, codec.CurrentKeyID()
	e.opts.Config.PayloadKey, e.opts.Config.PayloadOldKeys = secrets.NewKey(), oldKey
	_ = ws.conn.Close()
	e.restart()
	newID := e.stack.Deps.Codec.CurrentKeyID()
	require.NotEqual(t, oldID, newID)
	ws = e.dial(agent.ID, "")
	ws.next(5 * time.Second)
	evs = turn(t, e, ws, agent.ID, "list my notes")
	require.Len(t, toolEvents(t, evs, "tool_update"), 1)
	var underOld []*commonpb.Payload
	underNew := 0
	for _, p := range payloadsOf(t, rawHistory(t, e.stack.Deps.Temporal, wfID, "")) {
		switch string(p.Metadata[payloadcodec.MetadataKeyID]) {
		case oldID:
			underOld = append(underOld, p)
		case newID:
			underNew++
		}
	}
	assert.Greater(t, underNew, 0, "new payloads use the new key")
	require.NotEmpty(t, underOld)
	status, out, _ = e.codecCall("decode", underOld, bearer(e.tokenFor("ops-1")))
	require.Equal(t, http.StatusOK, status, "%s", out)
	assert.Contains(t, decodedText(t, out), body, "payloads under the old key decode after rotation")
}

// decodedText joins the data of a codec response's payloads.
func decodedText(t testing.TB, out []byte) string {
	var got commonpb.Payloads
	require.NoError(t, protojson.Unmarshal(out, &got))
	var b strings.Builder
	for _, p := range got.Payloads {
		require.NotEqual(t, payloadcodec.Encoding, string(p.Metadata["encoding"]))
		b.Write(p.Data)
	}
	return b.String()
}

// The dev stack's Temporal UI decodes through the API's codec out of the box, as an operator,
// from its own origin only.
func TestDevStackTemporalUIDecodesThroughTheCodec(t *testing.T) {
	t.Parallel()
	e := startEnv(t, func(c *config.Config, _ *devstack.Options) { c.TemporalUIPort = freePort(t) })
	ui := e.stack.TemporalUIURL
	var settings struct {
		Codec struct {
			Endpoint           string
			PassAccessToken    bool
			IncludeCredentials bool
		}
	}
	require.Eventually(t, func() bool {
		resp, err := http.Get(ui + "/api/v1/settings")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		return resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&settings) == nil
	}, 10*time.Second, 100*time.Millisecond)
	assert.Equal(t, e.stack.APIURL+"/api/codec", settings.Codec.Endpoint)
	assert.True(t, settings.Codec.IncludeCredentials)

	// Loading the UI (any call of its API) hands the browser the operator cookie.
	resp, err := http.Get(ui + "/api/v1/namespaces/" + e.cfg.TemporalNamespace)
	require.NoError(t, err)
	resp.Body.Close()
	var cookie *http.Cookie
	for _, ck := range resp.Cookies() {
		if ck.Name == ops.CodecCookie {
			cookie = ck
		}
	}
	require.NotNil(t, cookie, "the UI sets %s", ops.CodecCookie)
	assert.True(t, cookie.HttpOnly)
	assert.Equal(t, "/api/codec", cookie.Path)

	sealed, err := e.stack.Deps.Codec.DataConverter().ToPayload(map[string]string{"content": "Kundennummer 4711"})
	require.NoError(t, err)
	fromUI := http.Header{"Origin": {ui}, "Cookie": {ops.CodecCookie + "=" + cookie.Value}}

	// The browser's preflight, then the call itself, as the UI makes them.
	pre, err := http.NewRequest(http.MethodOptions, e.stack.APIURL+"/api/codec/decode", nil)
	require.NoError(t, err)
	pre.Header.Set("Origin", ui)
	pre.Header.Set("Access-Control-Request-Method", "POST")
	pre.Header.Set("Access-Control-Request-Headers", "content-type,x-namespace")
	presp, err := http.DefaultClient.Do(pre)
	require.NoError(t, err)
	presp.Body.Close()
	assert.Equal(t, http.StatusNoContent, presp.StatusCode)
	assert.Equal(t, ui, presp.Header.Get("Access-Control-Allow-Origin"))
	assert.Contains(t, presp.Header.Get("Access-Control-Allow-Headers"), "X-Namespace")

	status, out, h := e.codecCall("decode", []*commonpb.Payload{sealed}, fromUI)
	require.Equal(t, http.StatusOK, status, "%s", out)
	assert.Equal(t, ui, h.Get("Access-Control-Allow-Origin"))
	assert.Equal(t, "true", h.Get("Access-Control-Allow-Credentials"))
	var got commonpb.Payloads
	require.NoError(t, protojson.Unmarshal(out, &got))
	var v map[string]string
	require.NoError(t, converter.GetDefaultDataConverter().FromPayload(got.Payloads[0], &v))
	assert.Equal(t, "Kundennummer 4711", v["content"])

	// Without the cookie the codec stays closed; another site cannot use the cookie.
	status, _, _ = e.codecCall("decode", []*commonpb.Payload{sealed}, http.Header{"Origin": {ui}})
	assert.Equal(t, http.StatusUnauthorized, status)
	status, out, _ = e.codecCall("decode", []*commonpb.Payload{sealed}, http.Header{"Origin": {"https://evil.example"}, "Cookie": fromUI["Cookie"]})
	assert.Equal(t, http.StatusForbidden, status)
	assert.Contains(t, string(out), `"code":"origin_not_allowed"`)
	// The dev UI's operator is the UI's only: alice is still no operator.
	status, _, _ = e.codecCall("decode", []*commonpb.Payload{sealed}, bearer(e.token))
	assert.Equal(t, http.StatusForbidden, status)
}
