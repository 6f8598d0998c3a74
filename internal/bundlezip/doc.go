// Package bundlezip unpacks a process bundle uploaded as a zip archive
// (the management API's deploy) into a folder, safely: no entry may
// leave the folder (zip-slip: "..", absolute names, backslashes), only
// regular files and folders are written, and the number of entries and
// the bytes written are bounded whatever the archive's headers claim.
// The bundle's deploy.xml (or, for a WSO2 BPS task package, its
// htconfig.xml or a .ht file) must be at the archive's root or in its one
// top folder, which is then stripped.
//
// It imports nothing of orchd's.
package bundlezip
