// Package bundlefs reads the files of a process bundle confined to its
// folder: only regular files reached without a symbolic link, inside
// the folder (os.Root), each under a size bound, and the whole bundle
// under another. A symlink (whatever it points to), a device, a FIFO or
// a socket is refused with an error naming the file, before anything
// is read, so a bundle can neither expose a file outside its folder
// (served at ?wsdl=) nor make the server read /dev/zero whole.
//
// Every place that opens a bundle's files (deploy.xml, .bpel, WSDL,
// XSD, XSLT, secrets files) goes through ReadFile; Check walks a whole
// bundle before it is compiled. It imports nothing of orchd's.
package bundlefs
