package secrets

import (
	"context"
	"fmt"

	"github.com/sapagent/sapagent/internal/store"
)

// SealedStore is where the sealed values live (store.Connections): rotation reads those under
// older keys and replaces each with its re-sealed value.
type SealedStore interface {
	SealedRowsNotUnder(ctx context.Context, keyID string) ([]store.SealedRow, error)
	ReplaceSealed(ctx context.Context, row store.SealedRow, next store.SealedValue) error
}

// Rotate re-encrypts every stored value that is not under the keyring's current key and
// returns how many it re-sealed. Old keys must still be configured (SECRETS_OLD_KEYS) until
// it has run; values that cannot be opened are reported, never printed.
func Rotate(ctx context.Context, st SealedStore, keys *Keyring) (int, error) {
	rows, err := st.SealedRowsNotUnder(ctx, keys.CurrentKeyID())
	if err != nil {
		return 0, err
	}
	done := 0
	for _, row := range rows {
		aad := ConnectionSecretAAD(row.Key1, row.Key2)
		if row.Table == "user_connection_credentials" {
			aad = CredentialAAD(row.Key1, row.Key2)
		}
		plain, err := keys.Open(row.Value.KeyID, row.Value.Ciphertext, aad)
		if err != nil {
			return done, fmt.Errorf("%s row (key %s): %w", row.Table, row.Value.KeyID, err)
		}
		keyID, ct := keys.Seal(plain, aad)
		if err := st.ReplaceSealed(ctx, row, store.SealedValue{KeyID: keyID, Ciphertext: ct}); err != nil {
			return done, err
		}
		done++
	}
	return done, nil
}
