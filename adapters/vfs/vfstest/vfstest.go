// Package vfstest gives tests real filesystems in states that are hard to
// reach by hand: a disk that is full to the byte. It mounts a small tmpfs,
// so it needs Linux and the privilege to mount (root in the CI machine);
// elsewhere the test skips with the reason.
package vfstest
