// Package devtoken is the `token` command of sapagent and sapagent-dev: it prints a development
// bearer token signed with AUTH_JWT_SECRET (or the dev stack's generated secret in DATA_DIR), so
// the README's curl examples work against either binary.
package devtoken

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/sapagent/sapagent/internal/auth"
	"github.com/sapagent/sapagent/internal/config"
)

// Usage is the command line the token command accepts.
const Usage = "token --user <id> [--ttl 24h]"

// Run parses args (what follows "token"), mints the token and writes it to out.
func Run(cfg config.Config, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // the caller prints the error once, with the usage
	user := fs.String("user", "", "the user id (token subject)")
	ttl := fs.Duration("ttl", 24*time.Hour, "how long the token is valid")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return fmt.Errorf("usage: %s", Usage)
		}
		return fmt.Errorf("token: %v (usage: %s)", err, Usage)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("token: unexpected arguments %q (usage: %s)", fs.Args(), Usage)
	}
	if *user == "" {
		return fmt.Errorf("token: --user is required (usage: %s)", Usage)
	}
	if *ttl <= 0 {
		return fmt.Errorf("token: --ttl must be positive")
	}
	cfg, err := cfg.WithDevSecrets()
	if err != nil {
		return err
	}
	if cfg.AuthJWTSecret == "" {
		return fmt.Errorf("token: minting needs AUTH_JWT_SECRET (a JWKS setup gets tokens from its identity provider)")
	}
	tok, err := auth.Mint([]byte(cfg.AuthJWTSecret), *user, *ttl, cfg.AuthAudience, cfg.AuthIssuer)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(out, tok)
	return err
}
