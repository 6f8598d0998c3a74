package bundlezip

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// manyEntries is a zip64 archive of n empty stored files.
func manyEntries(t testing.TB, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := range n {
		if _, err := zw.CreateHeader(&zip.FileHeader{Name: strconv.Itoa(i), Method: zip.Store}); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestManyEntriesRefusedFromEndRecord: an archive of 300,001 entries is
// refused from its end record, before a directory of that size is read
// into memory (archive/zip would allocate tens of MB for it).
func TestManyEntriesRefusedFromEndRecord(t *testing.T) {
	data := manyEntries(t, 300_001)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err := Extract(data, t.TempDir(), Limits{})
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrArchive) || !strings.Contains(err.Error(), "declares 300001 entries, at most 4096") {
		t.Fatalf("err = %v, want the declared count refused", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("refusing it allocated %d bytes, want under 1 MiB (the directory was read)", grew)
	}
}

// TestDirectoryLongerThanDeclared: an end record that declares fewer
// entries than the directory holds, or a directory that does not end
// where the end record begins, is refused.
func TestDirectoryLongerThanDeclared(t *testing.T) {
	data := manyEntries(t, 10)
	eocd := bytes.LastIndex(data, []byte{0x50, 0x4b, 0x05, 0x06})
	for _, tc := range []struct {
		name string
		edit func(b []byte)
		want string
	}{
		{"fewer declared", func(b []byte) {
			binary.LittleEndian.PutUint16(b[eocd+8:], 2)
			binary.LittleEndian.PutUint16(b[eocd+10:], 2)
		}, "more than 5 entries"},
		{"size short", func(b []byte) {
			binary.LittleEndian.PutUint32(b[eocd+12:], binary.LittleEndian.Uint32(b[eocd+12:])-46)
		}, "does not end where"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := bytes.Clone(data)
			tc.edit(b)
			err := Extract(b, t.TempDir(), Limits{MaxEntries: 5})
			if tc.name == "size short" {
				err = Extract(b, t.TempDir(), Limits{})
			}
			if !errors.Is(err, ErrArchive) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// FuzzCheckDirectory: any bytes are answered without a panic.
func FuzzCheckDirectory(f *testing.F) {
	f.Add(manyEntries(f, 3))
	f.Add([]byte("PK\x05\x06"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = checkDirectory(data, 8)
	})
}
