package sapenrich

import (
	"regexp"
	"strings"
)

// Custom code sometimes holds credentials in literals (lv_password = 'secret'). Prompts are
// built from source excerpts, so such literals are masked before a model sees them.
var (
	secretWord = regexp.MustCompile(`(?i)(passw|pwd|secret|token|api[_-]?key|apikey|credential|private[_-]?key|authorization|bearer)`)
	literal    = regexp.MustCompile("'[^'\\n]*'|`[^`\\n]*`|\\|[^|\\n]*\\|")
	// Secrets that look like one wherever they appear.
	secretShape = regexp.MustCompile(`(?i)(bearer\s+[a-z0-9._~+/=-]{8,}|basic\s+[a-z0-9+/=]{12,}|-----BEGIN [A-Z ]*PRIVATE KEY-----|\b(sk|pk|rk)-[a-z0-9_-]{16,}|\bAKIA[0-9A-Z]{16}\b)`)
)

// redactSecrets masks literals on lines that mention a secret and anything shaped like a
// credential (bearer tokens, basic auth, private keys, API keys).
func redactSecrets(src string) string {
	lines := strings.Split(src, "\n")
	for i, l := range lines {
		if secretWord.MatchString(l) {
			l = literal.ReplaceAllStringFunc(l, func(lit string) string { return lit[:1] + "***" + lit[len(lit)-1:] })
		}
		lines[i] = secretShape.ReplaceAllString(l, "***")
	}
	return strings.Join(lines, "\n")
}
