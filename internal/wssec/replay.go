package wssec

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sync"
	"time"
)

// ReplayStore remembers the nonces of authentic UsernameTokens for as
// long as a token carrying one could still be fresh, so that a token
// sent again is refused. The default is in the Authenticator's memory
// (one orchd); with --cluster the nodes share one in etcd
// (cluster.Nonces), so a token replayed to another node is refused too.
// Implementations are safe for concurrent use.
type ReplayStore interface {
	// Add records key until until, and reports whether it was recorded
	// already and not expired (a replay). A key is a hex string of 64
	// characters. An error (the store did not answer, or is full)
	// refuses the token: a nonce that cannot be checked is not taken.
	Add(key string, until time.Time) (seen bool, err error)
}

// replayKey is the store key of a token of user with nonce: a hash, so
// that keys are of one length and one alphabet whatever the nonce.
func replayKey(user string, nonce []byte) string {
	h := sha256.New()
	h.Write([]byte(user))
	h.Write([]byte{0})
	h.Write(nonce)
	return hex.EncodeToString(h.Sum(nil))
}

// memoryReplay is the ReplayStore in memory: each key with the time its
// record ends, swept now and then.
type memoryReplay struct {
	now  func() time.Time
	mu   sync.Mutex
	seen map[string]time.Time
	adds int
}

// maxNonces bounds the nonces remembered in memory: past it new tokens
// with a nonce are refused (only authentic tokens get in, so only a
// user's own flood can fill it).
const maxNonces = 1 << 20

// errTooManyNonces is a full memoryReplay.
var errTooManyNonces = errors.New("too many nonces within the freshness window")

func (c *memoryReplay) Add(key string, until time.Time) (bool, error) {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[string]time.Time{}
	}
	if end, ok := c.seen[key]; ok && now.Before(end) {
		return true, nil
	}
	c.adds++
	if c.adds%1024 == 0 || len(c.seen) >= maxNonces {
		for k, end := range c.seen {
			if !now.Before(end) {
				delete(c.seen, k)
			}
		}
	}
	if len(c.seen) >= maxNonces {
		return false, errTooManyNonces
	}
	c.seen[key] = until
	return false, nil
}
