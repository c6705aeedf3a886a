package capture

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// fileSink writes lines to the capture file and rotates it by size: the
// full file is renamed with its rotation time (path.20260101T101010.000), gzipped
// (path....gz) and the oldest rotated files removed so that at most
// maxFiles files (the live one included) remain. A write that fails (a
// full disk) stops the sink for good: the caller logs it and counts it.
type fileSink struct {
	path     string
	maxBytes int64
	maxFiles int
	f        *os.File
	size     int64
	// gzipDone is told when a rotated file is compressed (tests wait).
	gzipDone func(string, error)
	// header is the line each new file starts with (format.go): a file
	// rotated away keeps its own, so each reads alone.
	header func() []byte
}

func openFileSink(path string, maxBytes int64, maxFiles int, header func() []byte) (*fileSink, error) {
	s := &fileSink{path: path, maxBytes: maxBytes, maxFiles: max(maxFiles, 1), header: header}
	if err := s.open(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *fileSink) open() error {
	f, err := os.OpenFile(s.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open capture file: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("open capture file: %w", err)
	}
	s.f, s.size = f, st.Size()
	return nil
}

// write appends one line (with its newline), rotating first when the line
// would take the file past maxBytes.
func (s *fileSink) write(line []byte) error {
	if s.maxBytes > 0 && s.size > 0 && s.size+int64(len(line)) > s.maxBytes {
		if err := s.rotate(); err != nil {
			return err
		}
	}
	if s.size == 0 && s.header != nil {
		// The header goes with the file's first line (a full disk
		// fails that write, as it fails any).
		line = append(s.header(), line...)
	}
	n, err := s.f.Write(line)
	s.size += int64(n)
	if err != nil {
		return fmt.Errorf("write capture file %s: %w", s.path, err)
	}
	return nil
}

func (s *fileSink) rotate() error {
	if err := s.f.Close(); err != nil {
		return fmt.Errorf("close capture file %s: %w", s.path, err)
	}
	rotated := s.path + "." + time.Now().UTC().Format("20060102T150405.000000")
	if err := os.Rename(s.path, rotated); err != nil {
		return fmt.Errorf("rotate capture file %s: %w", s.path, err)
	}
	if err := s.open(); err != nil {
		return err
	}
	err := gzipFile(rotated)
	if s.gzipDone != nil {
		s.gzipDone(rotated, err)
	}
	if err != nil {
		return fmt.Errorf("gzip rotated capture file: %w", err)
	}
	return s.prune()
}

// prune removes the oldest rotated files beyond maxFiles-1.
func (s *fileSink) prune() error {
	rotated, err := s.rotated()
	if err != nil {
		return err
	}
	for len(rotated) > s.maxFiles-1 {
		if err := os.Remove(rotated[0]); err != nil {
			return fmt.Errorf("remove old capture file: %w", err)
		}
		rotated = rotated[1:]
	}
	return nil
}

// rotated lists the rotated files, oldest first (their names sort by time).
func (s *fileSink) rotated() ([]string, error) {
	m, err := filepath.Glob(s.path + ".*.gz")
	if err != nil {
		return nil, err
	}
	m = slices.DeleteFunc(m, func(n string) bool { return strings.Count(strings.TrimPrefix(n, s.path), ".") != 3 })
	slices.Sort(m)
	return m, nil
}

func (s *fileSink) close() error { return s.f.Close() }

// gzipFile compresses name into name.gz and removes name.
func gzipFile(name string) (err error) {
	in, err := os.Open(name)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(name+".gz", os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	zw := gzip.NewWriter(out)
	if _, err = io.Copy(zw, in); err == nil {
		err = zw.Close()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name + ".gz")
		return err
	}
	return os.Remove(name)
}
