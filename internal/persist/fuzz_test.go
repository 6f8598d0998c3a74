package persist

import (
	"bytes"
	"testing"
)

// FuzzDecodeRecord feeds stored instance records to both decoders (the
// full one of Instance and Instances, the in-place one of ScanInstances):
// they never panic, agree on which records decode and on what they hold,
// and a record that decodes encodes back to one that decodes the same.
func FuzzDecodeRecord(f *testing.F) {
	for _, st := range []State{Running, Waiting, Suspended} {
		in := inst("seed", st)
		in.Fault = "why"
		rec := encodeInstance(&in)
		f.Add(rec)
		f.Add(rec[:len(rec)/2])
	}
	f.Add([]byte{instanceFormat, byte(Waiting), 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, v []byte) {
		in, err := decodeInstance("id", v)
		var view InstanceView
		decodeView([]byte("id"), v, &view)
		if (err == nil) != (view.Err == nil) {
			t.Fatalf("decodeInstance: %v, decodeView: %v", err, view.Err)
		}
		if err != nil {
			return
		}
		if in.State != view.State || in.Process != view.Process() || in.Fault != view.Fault() || !bytes.Equal(in.Frames, view.Frames()) ||
			!in.Created.Equal(view.Created) || !in.Updated.Equal(view.Updated) {
			t.Fatalf("decoders disagree: %+v and %+v", in, view)
		}
		n := 0
		view.Correlations(func(name, key []byte) bool {
			n++
			if got, ok := in.Correlations[string(name)]; !ok || got != string(key) {
				t.Fatalf("correlation %q: %q in the view, %q (%v) decoded", name, key, got, ok)
			}
			return true
		})
		if n < len(in.Correlations) {
			t.Fatalf("%d correlations in the view, %d decoded", n, len(in.Correlations))
		}
		again, err := decodeInstance("id", encodeInstance(in))
		if err != nil {
			t.Fatalf("a decoded record does not decode once encoded again: %v", err)
		}
		sameInstance(t, again, in)
	})
}
