//go:build race

package sandbox

// The race detector's shadow memory counts in a sandbox's resident memory, so memory limits
// are not what they seem under -race.
func init() { raceEnabled = true }
