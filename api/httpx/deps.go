package httpx

import (
	"log/slog"
	"time"

	"go.temporal.io/sdk/client"
)

// Deps are the dependencies every domain handler shares: the access checks, the logger, and
// Temporal with the task queue and the bound of each call made while answering a request.
// Each handler embeds it next to the store interfaces it declares itself.
type Deps struct {
	Access          Access
	Log             *slog.Logger
	Temporal        client.Client
	TaskQueue       string
	TemporalTimeout time.Duration
}
