package wssec

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/beevik/etree"
	"golang.org/x/crypto/bcrypt"
)

// costlyCredentials: ann has a bcrypt hash of "ann-pw" at cost, bob a
// plain secret "bob-pw".
func costlyCredentials(t testing.TB, cost int) *Credentials {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte("ann-pw"), cost)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseCredentials([]byte("ann:" + string(h) + "\nbob:{PLAIN}bob-pw\n"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRefusalsTakeAlike: a wrong PasswordText for a bcrypt user, for a
// {PLAIN} user and for an unknown user take about as long to refuse, so
// the time of a refusal does not say which users exist or how their
// password is stored. Medians of a few tries, compared with a generous
// ratio (no wall-clock bound).
func TestRefusalsTakeAlike(t *testing.T) {
	a := NewAuthenticator(Policy{Credentials: costlyCredentials(t, 6), Text: true, Now: func() time.Time { return t0 }})
	median := func(user string) time.Duration {
		var ds []time.Duration
		for range 3 {
			h := header(t, user, "wrong", false, t0)
			start := time.Now()
			_, _, err := a.Authenticate([]*etree.Element{h}, true)
			ds = append(ds, time.Since(start))
			if !errors.Is(err, ErrFailedAuthentication) {
				t.Fatalf("%s: %v, want a refusal", user, err)
			}
		}
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	got := map[string]time.Duration{}
	for _, u := range []string{"ann", "bob", "eve"} {
		got[u] = median(u)
	}
	t.Logf("medians: bcrypt user %s, plain user %s, unknown user %s", got["ann"], got["bob"], got["eve"])
	for _, u := range []string{"bob", "eve"} {
		if r := float64(got["ann"]) / float64(got[u]); r > 4 || r < 0.25 {
			t.Errorf("refusing %s took %s, the bcrypt user %s (ratio %.1f)", u, got[u], got["ann"], r)
		}
	}
}

// TestGateBound: with a Gate of 2 slots, of 6 concurrent checks of a
// wrong password some are refused at once as busy (Unavailable, not a
// wrong password), counted; a right {PLAIN} password needs no slot; once
// the checks are over a slot is free again.
func TestGateBound(t *testing.T) {
	g := NewGate(2)
	a := NewAuthenticator(Policy{Credentials: costlyCredentials(t, 7), Text: true, Checks: g, Now: func() time.Time { return t0 }})
	const n = 6
	hs := make([]*etree.Element, n)
	for i := range hs {
		hs[i] = header(t, "ann", "wrong", false, t0)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	busy, wrong := 0, 0
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, _, err := a.Authenticate([]*etree.Element{hs[i]}, true)
			var ae *AuthError
			if !errors.As(err, &ae) {
				t.Errorf("%v, want an AuthError", err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if ae.Unavailable() {
				busy++
			} else {
				wrong++
			}
		}()
	}
	close(start)
	// Meanwhile a right plain secret goes through.
	if _, _, err := a.Authenticate([]*etree.Element{header(t, "bob", "bob-pw", false, t0)}, true); err != nil {
		t.Errorf("a right {PLAIN} password while the slots are taken: %v", err)
	}
	wg.Wait()
	t.Logf("%d refused as busy, %d checked", busy, wrong)
	if busy == 0 || wrong == 0 || wrong > n-busy {
		t.Errorf("%d refused as busy and %d checked of %d, want some of each", busy, wrong, n)
	}
	if got := g.Refused(); got != uint64(busy) {
		t.Errorf("Refused() = %d, want %d", got, busy)
	}
	_, _, err := a.Authenticate([]*etree.Element{header(t, "eve", "x", false, t0)}, true)
	var ae *AuthError
	if !errors.As(err, &ae) || ae.Unavailable() {
		t.Errorf("after the checks: %v, want a plain refusal", err)
	}
}
