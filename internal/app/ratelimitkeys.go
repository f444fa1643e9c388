package app

import (
	"context"
	"strings"

	"github.com/redis/go-redis/v9"
)

// limiterKeys is the rate limiter's Redis client. redis_rate puts "rate:" before every key,
// which would leave the limiter's keys outside REDIS_PREFIX (the API already passes prefixed
// keys): invisible to per-deployment cleanup, and refused where Redis ACLs allow only the
// prefix (a limiter failing open for good). It strips that "rate:" again.
type limiterKeys struct{ *redis.Client }

const redisRatePrefix = "rate:"

func unrate(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = strings.TrimPrefix(k, redisRatePrefix)
	}
	return out
}

func (l limiterKeys) Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	return l.Client.Eval(ctx, script, unrate(keys), args...)
}

func (l limiterKeys) EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	return l.Client.EvalSha(ctx, sha1, unrate(keys), args...)
}

func (l limiterKeys) EvalRO(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	return l.Client.EvalRO(ctx, script, unrate(keys), args...)
}

func (l limiterKeys) EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	return l.Client.EvalShaRO(ctx, sha1, unrate(keys), args...)
}

func (l limiterKeys) Del(ctx context.Context, keys ...string) *redis.IntCmd {
	return l.Client.Del(ctx, unrate(keys)...)
}
