package sapsim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/sap"
)

func salesOrder(session string, commit bool, qty string) sap.ExecuteRFCRequest {
	return sap.ExecuteRFCRequest{Function: "BAPI_SALESORDER_CREATEFROMDAT2", Commit: commit, Session: session,
		Imports: map[string]any{"ORDER_HEADER_IN": map[string]any{"DOC_TYPE": "OR", "SALES_ORG": "1000"}},
		Tables:  map[string][]map[string]any{"ORDER_PARTNERS": {{"PARTN_ROLE": "AG", "PARTN_NUMB": "100001"}}, "ORDER_ITEMS_IN": {{"MATERIAL": "1", "TARGET_QTY": qty}}}}
}

func keyed(key string) Credentials {
	return Credentials{ConnectorKey: ECCConnectorKey, IdempotencyKey: key}
}

func changeCount(t *testing.T, s *System) int {
	t.Helper()
	res, err := call[sap.ProbeChangesResponse](t, s, sap.EndpointProbeChanges, eccKey, sap.ProbeChangesRequest{})
	require.NoError(t, err)
	return len(res.Changes)
}

func orderCount(t *testing.T, s *System) int {
	t.Helper()
	res, err := call[sap.ReadTableResponse](t, s, sap.EndpointReadTable, eccKey, sap.ReadTableRequest{Table: "VBAK", Fields: []string{"VBELN"}})
	require.NoError(t, err)
	return len(res.Rows)
}

// A repeated Idempotency-Key gets the first answer without running again: one order, one
// change-log entry. The same key with another body is refused; another SAP user's key is theirs.
func TestRepeatedIdempotencyKeyReturnsTheFirstResult(t *testing.T) {
	s := ecc(t)
	orders, changes := orderCount(t, s), changeCount(t, s)

	first, err := call[sap.ExecuteRFCResponse](t, s, sap.EndpointExecuteRFC, keyed("call-1/1"), salesOrder("s1", true, "3"))
	require.NoError(t, err)
	require.True(t, first.Committed, "%+v", first.Return)
	logged := changeCount(t, s)
	require.Greater(t, logged, changes)
	again, err := call[sap.ExecuteRFCResponse](t, s, sap.EndpointExecuteRFC, keyed("call-1/1"), salesOrder("s1", true, "3"))
	require.NoError(t, err)
	assert.Equal(t, first, again, "the first answer, with the first order number")
	assert.Equal(t, orders+1, orderCount(t, s), "one order")
	assert.Equal(t, logged, changeCount(t, s), "the change log shows the order once")

	_, err = call[sap.ExecuteRFCResponse](t, s, sap.EndpointExecuteRFC, keyed("call-1/1"), salesOrder("s1", true, "4"))
	require.Error(t, err)
	assert.Equal(t, sap.ErrIdempotencyKeyReused, sapCode(t, err))
	var se *sap.Error
	require.ErrorAs(t, err, &se)
	assert.Equal(t, http.StatusUnprocessableEntity, se.Status)

	dev := keyed("call-1/1")
	dev.User, dev.Password = "DEVELOPER", DefaultUsers()["DEVELOPER"]
	other, err := call[sap.ExecuteRFCResponse](t, s, sap.EndpointExecuteRFC, dev, salesOrder("s1", true, "4"))
	require.NoError(t, err, "keys are scoped per SAP user")
	assert.NotEqual(t, first.Exports["SALESDOCUMENT"], other.Exports["SALESDOCUMENT"])
	assert.Equal(t, orders+2, orderCount(t, s))

	// Without a key every call runs.
	_, err = call[sap.ExecuteRFCResponse](t, s, sap.EndpointExecuteRFC, eccKey, salesOrder("s1", true, "3"))
	require.NoError(t, err)
	assert.Equal(t, orders+3, orderCount(t, s))

	// write_table the same way.
	rows := []map[string]string{{"KUNNR": "0000100001", "ZZ_LOYALTY_TIER": "GOLD"}}
	changes = changeCount(t, s)
	w1, err := call[sap.WriteTableResponse](t, s, sap.EndpointWriteTable, keyed("call-2/1"), sap.WriteTableRequest{Table: "KNA1", Mode: "modify", Rows: rows})
	require.NoError(t, err)
	w2, err := call[sap.WriteTableResponse](t, s, sap.EndpointWriteTable, keyed("call-2/1"), sap.WriteTableRequest{Table: "KNA1", Mode: "modify", Rows: rows})
	require.NoError(t, err)
	assert.Equal(t, w1, w2)
	assert.Equal(t, changes+1, changeCount(t, s))

	_, err = call[sap.ExecuteRFCResponse](t, s, sap.EndpointExecuteRFC, keyed(string(bytes.Repeat([]byte("k"), 300))), salesOrder("s1", true, "3"))
	assert.Equal(t, sap.ErrBadRequest, sapCode(t, err))
}

// A retried BAPI + commit sequence (keys <call>/1 and <call>/2, one session) runs once, however
// far the first attempt got; a rolled-back BAPI is forgotten, so its retry stages again.
func TestRetriedBAPIAndCommitRunOnce(t *testing.T) {
	s := ecc(t)
	orders := orderCount(t, s)
	bapi := func(key string) sap.ExecuteRFCResponse {
		res, err := call[sap.ExecuteRFCResponse](t, s, sap.EndpointExecuteRFC, keyed(key), salesOrder("luw-1", false, "3"))
		require.NoError(t, err)
		return res
	}
	commit := func(key, session string) {
		_, err := call[sap.ExecuteRFCResponse](t, s, sap.EndpointExecuteRFC, keyed(key), sap.ExecuteRFCRequest{Function: "BAPI_TRANSACTION_COMMIT", Session: session})
		require.NoError(t, err)
	}

	// First attempt stops after the BAPI; the retry repeats it (answered from memory) and commits.
	first := bapi("a/1")
	assert.Equal(t, first, bapi("a/1"))
	commit("a/2", "luw-1")
	assert.Equal(t, orders+1, orderCount(t, s))
	// A third attempt after everything ran changes nothing.
	bapi("a/1")
	commit("a/2", "luw-1")
	assert.Equal(t, orders+1, orderCount(t, s))

	// Rolled back: the memory of the BAPI goes with the unit of work.
	bapi("b/1")
	_, err := call[sap.ExecuteRFCResponse](t, s, sap.EndpointExecuteRFC, keyed("b/2"), sap.ExecuteRFCRequest{Function: "BAPI_TRANSACTION_ROLLBACK", Session: "luw-1"})
	require.NoError(t, err)
	bapi("b/1")
	commit("b/3", "luw-1")
	assert.Equal(t, orders+2, orderCount(t, s), "the retried BAPI staged again and was committed once")
}

// Over HTTP the header is the key; concurrent calls with one key run once.
func TestIdempotencyKeyOverHTTP(t *testing.T) {
	land := NewLandscape(Options{})
	srv := httptest.NewServer(land.Handler())
	defer srv.Close()
	s, _ := land.System("ECC")
	orders := orderCount(t, s)
	body, _ := json.Marshal(salesOrder("h1", true, "2"))
	post := func(key string, body []byte) (int, string) {
		req, _ := http.NewRequest("POST", srv.URL+"/ECC/execute_rfc", bytes.NewReader(body))
		req.Header.Set(sap.HeaderConnectorKey, ECCConnectorKey)
		req.Header.Set(sap.HeaderIdempotencyKey, key)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		var out bytes.Buffer
		_, _ = out.ReadFrom(res.Body)
		return res.StatusCode, out.String()
	}
	// The same order without a key, to know what one order writes to the change log.
	before := changeCount(t, s)
	_, err := call[sap.ExecuteRFCResponse](t, s, sap.EndpointExecuteRFC, eccKey, salesOrder("h0", true, "2"))
	require.NoError(t, err)
	perOrder := changeCount(t, s) - before
	orders++
	changes := changeCount(t, s)

	var wg sync.WaitGroup
	answers := make([]string, 8)
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, out := post("http-1/1", body)
			assert.Equal(t, 200, code, out)
			answers[i] = out
		}()
	}
	wg.Wait()
	for _, a := range answers {
		assert.JSONEq(t, answers[0], a)
	}
	assert.Equal(t, orders+1, orderCount(t, s))
	assert.Equal(t, changes+perOrder, changeCount(t, s), "the change log shows the order once")

	other, _ := json.Marshal(salesOrder("h1", true, "5"))
	code, out := post("http-1/1", other)
	assert.Equal(t, http.StatusUnprocessableEntity, code)
	assert.Contains(t, out, sap.ErrIdempotencyKeyReused)
}

// The memory is bounded: past its capacity the least recently used keys are forgotten.
func TestIdempotencyMemoryIsBounded(t *testing.T) {
	m := newMemo()
	m.capacity = 3
	runs := 0
	do := func(key string) {
		_, err := m.do(context.Background(), key, []byte(`{}`), func() (any, error) { runs++; return runs, nil })
		require.NoError(t, err)
	}
	for i := 1; i <= 4; i++ {
		do(fmt.Sprint(i))
	}
	assert.Len(t, m.entries, 3)
	do("4")
	assert.Equal(t, 4, runs, "a recent key is remembered")
	do("1")
	assert.Equal(t, 5, runs, "the oldest key was forgotten")

	now := time.Now()
	m.now = func() time.Time { return now.Add(idempotencyTTL) }
	do("4")
	assert.Equal(t, 6, runs, "keys expire")
}
