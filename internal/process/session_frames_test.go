package process

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/interp"
)

// TestSessionFramesRoundTrip: an instance's session identifier is kept
// in its frames (version byte flagged FramesSession, after the endpoint
// list), with compensation records or without; an instance that never
// handed one out is written as before (version 2 or 4, no flag); a
// session flag on version 2, or an empty session, is corrupt.
func TestSessionFramesRoundTrip(t *testing.T) {
	p := compensationProc(t)
	const token = "00112233445566778899aabbccddeeff"
	var e *Engine
	for _, recs := range []bool{false, true} {
		for _, sess := range []string{"", token} {
			in := interp.NewInstance(nil, p, context.Background())
			if recs {
				in = recInstance(p)
			}
			in.SetSession(sess)
			b, err := in.EncodeFrames([]string{"route-1"}, 7)
			if err != nil {
				t.Fatal(err)
			}
			_, rest, _ := interp.SplitFingerprint(b)
			ver, flagged := interp.FramesVersionOf(rest[0])
			wantVer := byte(interp.FramesVersion)
			switch {
			case recs:
				wantVer = interp.FramesVersionComp
			case sess != "":
				wantVer = interp.FramesVersionEPRs
			}
			if ver != wantVer || flagged != (sess != "") {
				t.Errorf("recs %v session %q: version byte %#x, want version %d flagged %v", recs, sess, rest[0], wantVer, sess != "")
			}
			rec := &persist.Instance{ID: "x", Process: p.Name.String(), State: persist.Waiting, Frames: b}
			got, err := e.decode(context.Background(), p, rec, nil)
			if err != nil {
				t.Fatalf("recs %v session %q: decode: %v", recs, sess, err)
			}
			if got.Session() != sess || !slices.Equal(got.RegRoutes, []string{"route-1"}) || got.RegTimer != 7 {
				t.Errorf("recs %v: decoded session %q routes %v timer %d, want %q [route-1] 7", recs, got.Session(), got.RegRoutes, got.RegTimer, sess)
			}
		}
	}

	in := interp.NewInstance(nil, p, context.Background())
	b, err := in.EncodeFrames(nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := interp.SplitFingerprint(b)
	i := len(b) - len(rest) // the version byte, after the fingerprint
	bad := slices.Clone(b)
	bad[i] |= interp.FramesSession
	if _, err := e.decode(context.Background(), p, &persist.Instance{ID: "x", Frames: bad}, nil); !errors.Is(err, interp.ErrBadFrames) {
		t.Errorf("version 2 flagged with a session: %v, want ErrBadFrames", err)
	}
	in.SetSession(token)
	b, _ = in.EncodeFrames(nil, 0)
	empty := append(b[:len(b)-len(token)-1:len(b)-len(token)-1], 0)
	if _, err := e.decode(context.Background(), p, &persist.Instance{ID: "x", Frames: empty}, nil); !errors.Is(err, interp.ErrBadFrames) {
		t.Errorf("empty session: %v, want ErrBadFrames", err)
	}
}

// TestLegacySessionKept: an instance stored before session identifiers
// were tokens, registered under the session key built on its id, keeps
// its id as its session (its partners' callbacks carry it); one without
// such a key has none.
func TestLegacySessionKept(t *testing.T) {
	p := compensationProc(t)
	var e *Engine
	for routes, want := range map[string]string{interp.SessionKey("plain", "01ABC"): "01ABC", "plain": ""} {
		in := interp.NewInstance(nil, p, context.Background())
		b, err := in.EncodeFrames([]string{routes}, 0)
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.decode(context.Background(), p, &persist.Instance{ID: "01ABC", Frames: b}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got.Session() != want {
			t.Errorf("routes [%q]: session %q, want %q", routes, got.Session(), want)
		}
	}
}
