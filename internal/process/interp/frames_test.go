package interp

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/beevik/etree"

	"github.com/orchd/orchd/internal/persist"
	"github.com/orchd/orchd/internal/process/plan"
)

// The checkpoint's frames: control state, compensation records and
// sessions written and read back, and the decoders fuzzed.

// compensationProc is good-minimal with the scopes of
// testdata/compensation-snippet.xml (every compensation and termination
// construct) put before its reply.
func compensationProc(t testing.TB) *Version {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "compensation-snippet.xml"))
	if err != nil {
		t.Fatal(err)
	}
	const reply = `    <reply partnerLink="client" operation="run" variable="out"/>`
	procs, err := editedVersions(t, "good-minimal", "Test.bpel", reply, strings.TrimSuffix(string(b), "\n")+"\n"+reply)
	if err != nil || len(procs) != 1 {
		t.Fatalf("LoadBundle: %v", err)
	}
	return procs[0]
}

// recInstance is an instance of p whose process scope frame holds two
// completed instances of A (each with a snapshot of x and a completed
// inner), as a checkpoint taken after them would.
func recInstance(p *Version) *Instance {
	in := NewInstance(nil, p, context.Background())
	var a, inner *plan.Scope
	for _, act := range p.Acts {
		if s, ok := act.(*plan.Scope); ok && s.Name == "A" {
			a = s
		} else if ok && s.Name == "inner" {
			inner = s
		}
	}
	snap := func(v string) []privSlot {
		el := a.Vars[0].NewSlot()
		el.SetText(v)
		return []privSlot{{Slot: a.Vars[0].Slot, El: el}}
	}
	top := &compRec{}
	for _, v := range []string{"first", "second"} {
		top.Kids = append(top.Kids, &compRec{Sc: a, Snap: snap(v), Kids: []*compRec{{Sc: inner}}})
	}
	in.threads[0].stack = append(in.threads[0].stack, frame{act: p.Root, pc: scopeBody, rec: top})
	return in
}

// describeRec renders a record tree for comparison.
func describeRec(r *compRec) string {
	if r == nil {
		return "nil"
	}
	var b strings.Builder
	if r.Sc != nil {
		b.WriteString(r.Sc.Name)
	}
	for _, ps := range r.Snap {
		var w strings.Builder
		ps.El.WriteTo(&w, &etree.WriteSettings{})
		b.WriteString(" " + strconv.Itoa(ps.Slot) + "=" + w.String())
	}
	b.WriteString("[")
	for _, k := range r.Kids {
		b.WriteString(describeRec(k) + ";")
	}
	return b.String() + "]"
}

// decodeStored decodes rec as an engine that deployed only p loads it.
func decodeStored(p *Version, rec *persist.Instance, vars map[int][]byte) (*Instance, error) {
	frames := rec.Frames
	if _, rest, ok := SplitFingerprint(frames); ok {
		frames = rest
	}
	return Decode(testHost{}, p, rec, frames, vars, context.Background())
}

// checkStored is the decoding error of rec's frames and variables vars,
// as orchd instances finds a broken instance: nil for frames of another
// version of p and for errors that are not the data's.
func checkStored(p *Version, rec *persist.Instance, vars map[int][]byte) error {
	if fp, _, ok := SplitFingerprint(rec.Frames); ok && fp != p.Fingerprint {
		return nil
	}
	if _, err := decodeStored(p, rec, vars); err != nil && isCorrupt(err) {
		return err
	}
	return nil
}

// isCorrupt reports whether err is a stored instance's data failing to
// decode.
func isCorrupt(err error) bool {
	return errors.Is(err, ErrBadFrames) || errors.Is(err, ErrBadVariable) || errors.Is(err, persist.ErrCorrupt)
}

// Completed scope instances and their snapshots survive a checkpoint:
// written as frames version 4, read back the same.
func TestCompensationRecordsRoundTrip(t *testing.T) {
	p := compensationProc(t)
	in := recInstance(p)
	b, err := in.EncodeFrames(nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	fp, b, ok := SplitFingerprint(b)
	if !ok || fp != p.Fingerprint {
		t.Fatalf("frames start with fingerprint %q (%v), want %q", fp, ok, p.Fingerprint)
	}
	if b[0] != framesVersionComp {
		t.Fatalf("frames version %d, want %d", b[0], framesVersionComp)
	}
	out := NewInstance(nil, p, context.Background())
	if err := out.DecodeThreads(newReader(b[1:]), true); err != nil {
		t.Fatal(err)
	}
	want := describeRec(in.threads[0].stack[0].rec)
	if got := describeRec(out.threads[0].stack[0].rec); got != want || !strings.Contains(got, ">second<") {
		t.Errorf("records read back\n%s\nwant\n%s", got, want)
	}
	// An instance with no record is written as before (version 2).
	in.threads[0].stack[0].rec = nil
	b, _ = in.EncodeFrames(nil, 0)
	if _, b, _ = SplitFingerprint(b); b[0] != framesVersion {
		t.Errorf("frames version %d without records, want %d", b[0], framesVersion)
	}
}

// FuzzDecodeCompFrames feeds stored control state with compensation
// records to the decoder: it must fail cleanly, never panic.
func FuzzDecodeCompFrames(f *testing.F) {
	p := compensationProc(f)
	b, err := recInstance(p).EncodeFrames(nil, 0)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b[1:])
	f.Add([]byte{1, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		in := NewInstance(nil, p, context.Background())
		_ = in.DecodeThreads(newReader(data), true)
	})
}

// FuzzDecodeFrames feeds a stored instance's control state and a stored
// variable to the checkpoint decoder, as a load or a listing reads them:
// it fails cleanly (a broken instance), never panics.
func FuzzDecodeFrames(f *testing.F) {
	p := compensationProc(f)
	for _, in := range []*Instance{recInstance(p), NewInstance(nil, p, context.Background())} {
		b, err := in.EncodeFrames([]string{"route"}, 42)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, []byte("<v><x a='1'/></v>"))
		f.Add(b[:len(b)/2], []byte("<v"))
	}
	f.Fuzz(func(t *testing.T, frames, variable []byte) {
		rec := &persist.Instance{ID: "x", Process: p.Name.String(), State: persist.Waiting, Frames: frames}
		if err := checkStored(p, rec, map[int][]byte{1: variable}); err != nil && !isCorrupt(err) {
			t.Fatalf("checkStored: %v is not a decoding error", err)
		}
	})
}

// TestSessionFramesRoundTrip: an instance's session identifier is kept
// in its frames (version byte flagged FramesSession, after the endpoint
// list), with compensation records or without; an instance that never
// handed one out is written as before (version 2 or 4, no flag); a
// session flag on version 2, or an empty session, is corrupt.
func TestSessionFramesRoundTrip(t *testing.T) {
	p := compensationProc(t)
	const token = "00112233445566778899aabbccddeeff"
	for _, recs := range []bool{false, true} {
		for _, sess := range []string{"", token} {
			in := NewInstance(nil, p, context.Background())
			if recs {
				in = recInstance(p)
			}
			in.SetSession(sess)
			b, err := in.EncodeFrames([]string{"route-1"}, 7)
			if err != nil {
				t.Fatal(err)
			}
			_, rest, _ := SplitFingerprint(b)
			ver, flagged := framesVersionOf(rest[0])
			wantVer := byte(framesVersion)
			switch {
			case recs:
				wantVer = framesVersionComp
			case sess != "":
				wantVer = framesVersionEPRs
			}
			if ver != wantVer || flagged != (sess != "") {
				t.Errorf("recs %v session %q: version byte %#x, want version %d flagged %v", recs, sess, rest[0], wantVer, sess != "")
			}
			rec := &persist.Instance{ID: "x", Process: p.Name.String(), State: persist.Waiting, Frames: b}
			got, err := decodeStored(p, rec, nil)
			if err != nil {
				t.Fatalf("recs %v session %q: decode: %v", recs, sess, err)
			}
			if got.Session() != sess || !slices.Equal(got.regRoutes, []string{"route-1"}) || got.regTimer != 7 {
				t.Errorf("recs %v: decoded session %q routes %v timer %d, want %q [route-1] 7", recs, got.Session(), got.regRoutes, got.regTimer, sess)
			}
		}
	}

	in := NewInstance(nil, p, context.Background())
	b, err := in.EncodeFrames(nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := SplitFingerprint(b)
	i := len(b) - len(rest) // the version byte, after the fingerprint
	bad := slices.Clone(b)
	bad[i] |= framesSession
	if _, err := decodeStored(p, &persist.Instance{ID: "x", Frames: bad}, nil); !errors.Is(err, ErrBadFrames) {
		t.Errorf("version 2 flagged with a session: %v, want ErrBadFrames", err)
	}
	in.SetSession(token)
	b, _ = in.EncodeFrames(nil, 0)
	empty := append(b[:len(b)-len(token)-1:len(b)-len(token)-1], 0)
	if _, err := decodeStored(p, &persist.Instance{ID: "x", Frames: empty}, nil); !errors.Is(err, ErrBadFrames) {
		t.Errorf("empty session: %v, want ErrBadFrames", err)
	}
}

// TestLegacySessionKept: an instance stored before session identifiers
// were tokens, registered under the session key built on its id, keeps
// its id as its session (its partners' callbacks carry it); one without
// such a key has none.
func TestLegacySessionKept(t *testing.T) {
	p := compensationProc(t)
	for routes, want := range map[string]string{SessionKey("plain", "01ABC"): "01ABC", "plain": ""} {
		in := NewInstance(nil, p, context.Background())
		b, err := in.EncodeFrames([]string{routes}, 0)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeStored(p, &persist.Instance{ID: "01ABC", Frames: b}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got.Session() != want {
			t.Errorf("routes [%q]: session %q, want %q", routes, got.Session(), want)
		}
	}
}

// FuzzSplitFingerprint: stored frames of any shape split without panic,
// and what tagged frames split into is written back the same.
func FuzzSplitFingerprint(f *testing.F) {
	f.Add([]byte{FramesFingerprinted, 3, 'a', 'b', 'c', framesVersion, 1})
	f.Add([]byte{framesVersion})
	f.Add([]byte{FramesFingerprinted, 200})
	f.Fuzz(func(t *testing.T, b []byte) {
		fp, rest, ok := SplitFingerprint(b)
		if !ok {
			if !bytes.Equal(rest, b) || fp != "" {
				t.Fatalf("untagged frames changed: %q %x", fp, rest)
			}
			return
		}
		if !bytes.HasSuffix(b, rest) || len(rest)+len(fp) >= len(b) {
			t.Fatalf("split %x into %q and %x", b, fp, rest)
		}
		again := append(appendString([]byte{FramesFingerprinted}, fp), rest...)
		if fp2, rest2, ok := SplitFingerprint(again); !ok || fp2 != fp || !bytes.Equal(rest2, rest) {
			t.Fatalf("re-encoded %q %x splits into %q %x", fp, rest, fp2, rest2)
		}
	})
}
