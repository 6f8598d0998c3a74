package bundlezip

import (
	"encoding/binary"
	"fmt"
)

// Zip records read before archive/zip reads the central directory
// (APPNOTE 4.3.12-4.3.16).
const (
	sigEOCD       = 0x06054b50
	sigZip64EOCD  = 0x06064b50
	sigZip64Loc   = 0x07064b50
	sigDirHeader  = 0x02014b50
	eocdLen       = 22
	zip64LocLen   = 20
	zip64EOCDLen  = 56
	dirHeaderLen  = 46
	maxCommentLen = 0xffff
)

// checkDirectory reads the archive's end-of-central-directory record
// (and its zip64 one) and walks the central directory's fixed-size
// headers without keeping them, so that an archive of more than max
// entries is refused before archive/zip builds a File for each. It also
// refuses a directory that does not end where the end records begin, so
// that archive/zip, which reads headers until it meets another
// signature, reads no more than were counted.
func checkDirectory(data []byte, max int) error {
	eocd := -1
	for i := len(data) - eocdLen; i >= 0 && i >= len(data)-eocdLen-maxCommentLen; i-- {
		if binary.LittleEndian.Uint32(data[i:]) == sigEOCD {
			eocd = i
			break
		}
	}
	if eocd < 0 {
		return fmt.Errorf("%w: no end-of-central-directory record: not a zip archive", ErrArchive)
	}
	e := data[eocd:]
	entries := uint64(binary.LittleEndian.Uint16(e[10:]))
	size := uint64(binary.LittleEndian.Uint32(e[12:]))
	offset := uint64(binary.LittleEndian.Uint32(e[16:]))
	end := uint64(eocd) // where the directory must end
	if entries == 0xffff || size == 0xffffffff || offset == 0xffffffff {
		loc := eocd - zip64LocLen
		if loc < 0 || binary.LittleEndian.Uint32(data[loc:]) != sigZip64Loc {
			return fmt.Errorf("%w: the end record points to a zip64 record that is not there", ErrArchive)
		}
		at := binary.LittleEndian.Uint64(data[loc+8:])
		if at > uint64(loc) || uint64(loc)-at < zip64EOCDLen || binary.LittleEndian.Uint32(data[at:]) != sigZip64EOCD {
			return fmt.Errorf("%w: bad zip64 end-of-central-directory record", ErrArchive)
		}
		z := data[at:]
		entries = binary.LittleEndian.Uint64(z[32:])
		size = binary.LittleEndian.Uint64(z[40:])
		offset = binary.LittleEndian.Uint64(z[48:])
		end = at
	}
	if entries > uint64(max) {
		return fmt.Errorf("%w: the archive declares %d entries, at most %d", ErrArchive, entries, max)
	}
	if offset > end || size != end-offset {
		return fmt.Errorf("%w: the central directory (offset %d, %d bytes) does not end where its end record begins (%d)", ErrArchive, offset, size, end)
	}
	n := 0
	for pos := offset; pos < end; {
		if end-pos < dirHeaderLen || binary.LittleEndian.Uint32(data[pos:]) != sigDirHeader {
			return fmt.Errorf("%w: bad central directory header at offset %d", ErrArchive, pos)
		}
		if n++; n > max {
			return fmt.Errorf("%w: the central directory holds more than %d entries", ErrArchive, max)
		}
		h := data[pos:]
		pos += dirHeaderLen + uint64(binary.LittleEndian.Uint16(h[28:])) +
			uint64(binary.LittleEndian.Uint16(h[30:])) + uint64(binary.LittleEndian.Uint16(h[32:]))
		if pos > end {
			return fmt.Errorf("%w: a central directory header runs past the directory's end", ErrArchive)
		}
	}
	return nil
}
