package activities

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestDeltaPublisherSendsAtOnceAndJoinsWhileBusy(t *testing.T) {
	var mu sync.Mutex
	var sent []string
	release := make(chan struct{})
	p := newDeltaPublisher(func(text string, n int) {
		if n == 1 {
			<-release // the first publish is "in flight" until released
		}
		mu.Lock()
		sent = append(sent, text)
		mu.Unlock()
	})
	p.Add("Hel")
	time.Sleep(20 * time.Millisecond) // the first delta is being published
	p.Add("lo, ")
	p.Add("wor")
	p.Add("ld")
	close(release)
	p.Close()
	assert.Equal(t, "Hello, world", strings.Join(sent, ""), "nothing lost, order kept")
	assert.Equal(t, []string{"Hel", "lo, world"}, sent, "deltas arriving during a publish are joined")
}

func TestDeltaPublisherCloseFlushesPending(t *testing.T) {
	var got strings.Builder
	p := newDeltaPublisher(func(text string, _ int) { got.WriteString(text) })
	for i := 0; i < 100; i++ {
		p.Add("x")
	}
	p.Close()
	assert.Equal(t, strings.Repeat("x", 100), got.String())
}
