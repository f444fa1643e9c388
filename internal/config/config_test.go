package config

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestDefaultsRunOfflineOnADevMachine(t *testing.T) {
	c, err := load(env(nil))
	require.NoError(t, err)
	assert.Equal(t, ":8080", c.HTTPAddr)
	assert.Equal(t, "offline:sapagent-offline", c.PrimaryModel)
	assert.Equal(t, "offline:sapagent-offline", c.EmbeddingsModel)
	assert.True(t, c.UsesOfflineModel())
	assert.Equal(t, "http://127.0.0.1:8089/v1", c.OfflineLLMURL)
	assert.Equal(t, 100*1024, c.MaxMessageBytes)
	assert.Equal(t, 7*24*time.Hour, c.IdleTimeout)
	assert.Equal(t, 250*time.Millisecond, c.RateLimitTimeout)
	assert.Equal(t, 5*time.Second, c.TemporalCallTimeout)
	assert.Equal(t, 15*time.Second, c.StreamAccessCheck)
	assert.Equal(t, 4, c.SandboxPoolSize)
	assert.Equal(t, 256, c.SandboxMemoryMB)
	assert.Equal(t, int64(1<<30), c.WorkspaceStorageBytes)
	assert.Equal(t, 20, c.MaxSocketsPerUser)
}

func TestAnAPIKeySwitchesTheDefaultModel(t *testing.T) {
	c, err := load(env(map[string]string{"OPENAI_API_KEY": "sk-test"}))
	require.NoError(t, err)
	assert.Equal(t, "openai:gpt-4o-mini", c.PrimaryModel)
	assert.Equal(t, "openai:text-embedding-3-small", c.EmbeddingsModel)
	assert.False(t, c.UsesOfflineModel())
}

func TestEmbeddingsModelChecksOnlyItsProvider(t *testing.T) {
	// OPENAI_MODELS lists chat models; the embeddings model need not be among them.
	c, err := load(env(map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_MODELS": "gpt-4o-mini"}))
	require.NoError(t, err)
	assert.Equal(t, "openai:text-embedding-3-small", c.EmbeddingsModel)
	_, err = load(env(map[string]string{"EMBEDDINGS_MODEL": "nope:x"}))
	assert.ErrorContains(t, err, "EMBEDDINGS_MODEL")
	_, err = load(env(map[string]string{"EMBEDDINGS_MODEL": "text-embedding-3-small"}))
	assert.ErrorContains(t, err, "EMBEDDINGS_MODEL")
}

func TestMalformedValuesNameTheVariable(t *testing.T) {
	for name, vars := range map[string]map[string]string{
		"MAX_MESSAGE_BYTES":            {"MAX_MESSAGE_BYTES": "lots"},
		"AGENT_IDLE_TIMEOUT":           {"AGENT_IDLE_TIMEOUT": "a week"},
		"PRIMARY_MODEL":                {"PRIMARY_MODEL": "gpt-4o"},
		"ENVIRONMENT":                  {"ENVIRONMENT": "staging"},
		"SAPSIM_ERROR_RATE":            {"SAPSIM_ERROR_RATE": "1.5"},
		"CONNECTOR_TIMEOUT":            {"CONNECTOR_TIMEOUT": "0s"},
		"EXECUTE_CODE_TIMEOUT":         {"EXECUTE_CODE_TIMEOUT": "soon"},
		"RATE_LIMIT_TIMEOUT":           {"RATE_LIMIT_TIMEOUT": "0s"},
		"TEMPORAL_CALL_TIMEOUT":        {"TEMPORAL_CALL_TIMEOUT": "-1s"},
		"STREAM_ACCESS_CHECK_INTERVAL": {"STREAM_ACCESS_CHECK_INTERVAL": "0s"},
		"SANDBOX_POOL_SIZE":            {"SANDBOX_POOL_SIZE": "0"},
		"SANDBOX_MEMORY_MB":            {"SANDBOX_MEMORY_MB": "8"},
		"SANDBOX_MAX_PER_ORG":          {"SANDBOX_MAX_PER_ORG": "-1"},
		"SANDBOX_MAX_PER_USER":         {"SANDBOX_MAX_PER_USER": "two"},
		"SANDBOX_UID":                  {"SANDBOX_UID": "0"},
		"SANDBOX_GID":                  {"SANDBOX_GID": "-5"},
		"WORKSPACE_STORAGE_BYTES":      {"WORKSPACE_STORAGE_BYTES": "1GB"},
		"MAX_SOCKETS_PER_USER":         {"MAX_SOCKETS_PER_USER": "0"},
		"CUSTOMER_NAMESPACES":          {"CUSTOMER_NAMESPACES": "ACME"},
		"DEV_SAP_ROUTE":                {"DEV_SAP_ROUTE": "direct"},
		"SIMULATOR_CONNECTOR_KEY":      {"SIMULATOR_CONNECTOR_URL": "http://sapsim-connector:8070"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := load(env(vars))
			require.Error(t, err)
			assert.Contains(t, err.Error(), name)
		})
	}
	_, err := load(env(map[string]string{"MAX_MESSAGE_BYTES": "0"}))
	assert.ErrorContains(t, err, "MAX_MESSAGE_BYTES")
}

func TestProvidersComeFromTheEnvironment(t *testing.T) {
	vars := map[string]string{
		"PROVIDER_AZURE_BASE_URL": "https://example.openai.azure.com/v1", "PROVIDER_AZURE_API_KEY": "k",
		"PROVIDER_AZURE_MODELS": "gpt-4o, gpt-4o-mini", "OPENAI_MODELS": "gpt-4.1",
	}
	environ := func() []string {
		var out []string
		for k, v := range vars {
			out = append(out, k+"="+v)
		}
		return out
	}
	c, err := loadWith(env(vars), environ)
	require.NoError(t, err)
	assert.NoError(t, c.ValidateModel("azure:gpt-4o-mini"))
	assert.NoError(t, c.ValidateModel("openai:gpt-4.1"))
	assert.NoError(t, c.ValidateModel("offline:sapagent-offline"))
	assert.ErrorContains(t, c.ValidateModel("azure:o3"), "not offered")
	assert.ErrorContains(t, c.ValidateModel("anthropic:claude"), "unknown model provider")
	assert.ErrorContains(t, c.ValidateModel("gpt-4o"), "provider:model")
	_, err = loadWith(env(map[string]string{"PRIMARY_MODEL": "nope:x"}), nil)
	assert.ErrorContains(t, err, "PRIMARY_MODEL")
}

func TestDevSecretsAreGeneratedOnceAndProductionMustConfigureThem(t *testing.T) {
	dir := t.TempDir()
	c, err := load(env(map[string]string{"DATA_DIR": dir}))
	require.NoError(t, err)
	first, err := c.WithDevSecrets()
	require.NoError(t, err)
	assert.NotEmpty(t, first.AuthJWTSecret)
	assert.NotEmpty(t, first.SecretsKey)
	assert.NotEmpty(t, first.PayloadKey)
	assert.NotEqual(t, first.SecretsKey, first.PayloadKey)
	again, err := c.WithDevSecrets()
	require.NoError(t, err)
	assert.Equal(t, first.AuthJWTSecret, again.AuthJWTSecret, "tokens stay valid across restarts")
	assert.Equal(t, first.SecretsKey, again.SecretsKey)
	assert.Equal(t, first.PayloadKey, again.PayloadKey, "histories stay readable across restarts")

	prod, err := load(env(map[string]string{"DATA_DIR": dir, "ENVIRONMENT": "production"}))
	require.NoError(t, err)
	_, err = prod.WithDevSecrets()
	assert.ErrorContains(t, err, "SECRETS_KEY")
	noPayloadKey, err := load(env(map[string]string{"ENVIRONMENT": "production", "AUTH_JWT_SECRET": "s", "SECRETS_KEY": "k"}))
	require.NoError(t, err)
	_, err = noPayloadKey.WithDevSecrets()
	assert.ErrorContains(t, err, "PAYLOAD_KEY")
	payloadKey, _ := decodeKey(randomBase64())
	strong := map[string]string{"ENVIRONMENT": "production", "AUTH_JWT_SECRET": randomBase64(),
		"SECRETS_KEY": randomBase64(), "PAYLOAD_KEY": base64.RawURLEncoding.EncodeToString(payloadKey)}
	set, err := load(env(strong))
	require.NoError(t, err)
	_, err = set.WithDevSecrets()
	assert.NoError(t, err)
}

// Production refuses to start with a weak token secret or a key of the wrong size, and says
// which variable without echoing it.
func TestProductionRefusesWeakSecrets(t *testing.T) {
	key := base64.StdEncoding.EncodeToString(make([]byte, 32))
	base := map[string]string{"ENVIRONMENT": "production", "AUTH_JWT_SECRET": randomBase64(), "SECRETS_KEY": randomBase64(), "PAYLOAD_KEY": randomBase64()}
	for _, tc := range []struct{ name, value, want string }{
		{"AUTH_JWT_SECRET", "Q", "AUTH_JWT_SECRET is 1 bytes"},
		{"AUTH_JWT_SECRET", strings.Repeat("Z", 31), "AUTH_JWT_SECRET is 31 bytes"},
		{"SECRETS_KEY", base64.StdEncoding.EncodeToString(make([]byte, 16)), "SECRETS_KEY must be the base64 of 32"},
		{"SECRETS_KEY", "not-base64!", "SECRETS_KEY must be the base64 of 32"},
		{"PAYLOAD_KEY", base64.StdEncoding.EncodeToString(make([]byte, 33)), "PAYLOAD_KEY must be the base64 of 32"},
	} {
		vars := map[string]string{}
		for k, v := range base {
			vars[k] = v
		}
		vars[tc.name] = tc.value
		c, err := load(env(vars))
		require.NoError(t, err)
		_, err = c.WithDevSecrets()
		if assert.Error(t, err, tc.name) {
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), tc.value, "the secret is never echoed")
		}
	}
	// Development keeps accepting whatever it is given.
	dev := map[string]string{"AUTH_JWT_SECRET": "s", "SECRETS_KEY": key, "PAYLOAD_KEY": key}
	c, err := load(env(dev))
	require.NoError(t, err)
	_, err = c.WithDevSecrets()
	assert.NoError(t, err)
}

// A data folder from a version without payload encryption gets a payload key added; the
// secrets it already had are kept (tokens and stored passwords stay valid).
func TestDevSecretsFileFromAnOlderVersionGetsAPayloadKey(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "dev-secrets.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"jwt_secret":"jwt-old","secrets_key":"key-old"}`), 0o600))
	c, err := load(env(map[string]string{"DATA_DIR": dir}))
	require.NoError(t, err)
	got, err := c.WithDevSecrets()
	require.NoError(t, err)
	assert.Equal(t, "jwt-old", got.AuthJWTSecret)
	assert.Equal(t, "key-old", got.SecretsKey)
	require.NotEmpty(t, got.PayloadKey)
	again, err := c.WithDevSecrets()
	require.NoError(t, err)
	assert.Equal(t, got.PayloadKey, again.PayloadKey, "the added key was saved")
}

func TestOperatorsAndCodecOriginsAreLists(t *testing.T) {
	c, err := load(env(map[string]string{"OPERATORS": " ops-1, ops-2 ,", "CODEC_ALLOWED_ORIGINS": "https://temporal.example.com"}))
	require.NoError(t, err)
	assert.Equal(t, []string{"ops-1", "ops-2"}, c.Operators)
	assert.Equal(t, []string{"https://temporal.example.com"}, c.CodecOrigins)
	c, err = load(env(nil))
	require.NoError(t, err)
	assert.Empty(t, c.Operators, "nobody decodes payloads unless named")
}

func TestContextSizesPerModelProviderAndDefault(t *testing.T) {
	c, err := load(env(nil))
	require.NoError(t, err)
	assert.Equal(t, 32000, c.ContextTokens("offline:sapagent-offline"))
	assert.Equal(t, 32000, c.ContextTokens("openai:gpt-4o"))

	vars := map[string]string{
		"MODEL_CONTEXT_TOKENS":            "16000",
		"PROVIDER_AZURE_BASE_URL":         "https://example.openai.azure.com/v1",
		"PROVIDER_AZURE_CONTEXT_TOKENS":   "128000",
		"PROVIDER_OFFLINE_CONTEXT_TOKENS": "8192",
		"MODEL_CONTEXT_LIMITS":            "openai:gpt-4o=128000, azure:gpt-35-turbo=16385",
	}
	environ := func() []string {
		var out []string
		for k, v := range vars {
			out = append(out, k+"="+v)
		}
		return out
	}
	c, err = loadWith(env(vars), environ)
	require.NoError(t, err)
	assert.Equal(t, 128000, c.ContextTokens("openai:gpt-4o"), "the model's own size")
	assert.Equal(t, 16000, c.ContextTokens("openai:gpt-4o-mini"), "MODEL_CONTEXT_TOKENS")
	assert.Equal(t, 128000, c.ContextTokens("azure:gpt-4o"), "the provider's size")
	assert.Equal(t, 16385, c.ContextTokens("azure:gpt-35-turbo"))
	assert.Equal(t, 8192, c.ContextTokens("offline:sapagent-offline"))
	assert.Equal(t, 16000, c.ContextTokens("nope:x"))
}

func TestBadContextSizesNameTheVariable(t *testing.T) {
	for name, vars := range map[string]map[string]string{
		"MODEL_CONTEXT_TOKENS":            {"MODEL_CONTEXT_TOKENS": "big"},
		"MODEL_CONTEXT_TOKENS ":           {"MODEL_CONTEXT_TOKENS": "100"},
		"PROVIDER_OPENAI_CONTEXT_TOKENS":  {"PROVIDER_OPENAI_CONTEXT_TOKENS": "2000"},
		"PROVIDER_OFFLINE_CONTEXT_TOKENS": {"PROVIDER_OFFLINE_CONTEXT_TOKENS": "lots"},
		"MODEL_CONTEXT_LIMITS":            {"MODEL_CONTEXT_LIMITS": "openai:gpt-4o"},
		"MODEL_CONTEXT_LIMITS ":           {"MODEL_CONTEXT_LIMITS": "openai:gpt-4o=12"},
		"MODEL_CONTEXT_LIMITS  ":          {"MODEL_CONTEXT_LIMITS": "anthropic:claude=200000"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := load(env(vars))
			require.Error(t, err)
			assert.Contains(t, err.Error(), strings.TrimSpace(name))
		})
	}
}

func TestOIDCSettings(t *testing.T) {
	c, err := load(env(map[string]string{"OIDC_ISSUER": "https://login.example.com/realms/acme/", "OIDC_CLIENT_ID": "web"}))
	require.NoError(t, err)
	assert.Equal(t, "https://login.example.com/realms/acme", c.OIDCIssuer)
	assert.Equal(t, "openid profile email", c.OIDCScopes)
	assert.Equal(t, "https://login.example.com", c.OIDCOrigin())

	_, err = load(env(map[string]string{"OIDC_ISSUER": "http://localhost:9000", "OIDC_CLIENT_ID": "web"}))
	require.NoError(t, err, "http is fine off production")
	_, err = load(env(map[string]string{"ENVIRONMENT": "production", "OIDC_ISSUER": "http://login.example.com", "OIDC_CLIENT_ID": "web"}))
	require.ErrorContains(t, err, "OIDC_ISSUER must be an https URL in production")
	_, err = load(env(map[string]string{"OIDC_ISSUER": "https://login.example.com"}))
	require.ErrorContains(t, err, "OIDC_CLIENT_ID")
	_, err = load(env(map[string]string{"OIDC_ISSUER": "login.example.com", "OIDC_CLIENT_ID": "web"}))
	require.ErrorContains(t, err, "OIDC_ISSUER")
	_, err = load(env(map[string]string{"OIDC_ISSUER": "https://login.example.com", "OIDC_CLIENT_ID": "web", "OIDC_SCOPES": "profile"}))
	require.ErrorContains(t, err, "OIDC_SCOPES")
}

func TestModelChoicesAreWhatValidationAccepts(t *testing.T) {
	vars := map[string]string{"OPENAI_API_KEY": "sk", "OPENAI_MODELS": "gpt-4o-mini, gpt-4o", "MODEL_CONTEXT_LIMITS": "openai:gpt-4o=128000",
		"PROVIDER_LOCAL_BASE_URL": "http://127.0.0.1:1234/v1", "PROVIDER_LOCAL_MODELS": "llama"}
	c, err := loadWith(env(vars), func() []string { return []string{"PROVIDER_LOCAL_BASE_URL=x"} })
	require.NoError(t, err)
	var refs []string
	for _, m := range c.ModelChoices() {
		ref := m.Provider + ":" + m.Model
		require.NoError(t, c.ValidateModel(ref))
		refs = append(refs, ref)
		assert.Equal(t, ref == c.PrimaryModel, m.Default)
		assert.Equal(t, c.ContextTokens(ref), m.ContextTokens)
	}
	assert.Equal(t, []string{"openai:gpt-4o-mini", "openai:gpt-4o", "offline:sapagent-offline", "local:llama"}, refs)

	vars["ENVIRONMENT"] = "production"
	c, err = load(env(vars))
	require.NoError(t, err)
	refs = nil
	for _, m := range c.ModelChoices() {
		refs = append(refs, m.Provider+":"+m.Model)
	}
	assert.Equal(t, []string{"openai:gpt-4o-mini", "openai:gpt-4o"}, refs, "production hides the offline model unless it is primary")
}

// Issue 18: the budgets of index reads, the landscape cache and the sync's item cap.
func TestIndexReadBudgetsCacheAndSyncItemCap(t *testing.T) {
	c, err := load(env(nil))
	require.NoError(t, err)
	assert.Equal(t, 60, c.IndexReadsPerMinute)
	assert.Equal(t, 300, c.IndexReadsPerWorkspaceMinute)
	assert.Equal(t, int64(256<<20), c.LandscapeCacheBytes)
	assert.Equal(t, int64(64<<20), c.LandscapeCacheWorkspaceBytes)
	assert.Equal(t, int64(5_000_000), c.SyncMaxItemsPerPhase)
	for name, vars := range map[string]map[string]string{
		"INDEX_READS_PER_MINUTE":               {"INDEX_READS_PER_MINUTE": "0"},
		"INDEX_READS_PER_WORKSPACE_PER_MINUTE": {"INDEX_READS_PER_WORKSPACE_PER_MINUTE": "many"},
		"LANDSCAPE_CACHE_WORKSPACE_BYTES":      {"LANDSCAPE_CACHE_BYTES": "1000", "LANDSCAPE_CACHE_WORKSPACE_BYTES": "2000"},
		"SYNC_MAX_ITEMS_PER_PHASE":             {"SYNC_MAX_ITEMS_PER_PHASE": "-1"},
	} {
		_, err := load(env(vars))
		assert.ErrorContains(t, err, name)
	}
}
