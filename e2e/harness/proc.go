package harness

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// proc is one JVM started through an e2e/bin script that execs java, so the PID is the JVM's.
// It is stopped only by that PID, never by name.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error // exit status, valid after done
}

// startProc runs script args (with env added) with stdout going to onLine (and stdoutFile),
// stderr to onErrLine (and errFile).
// The JVM is killed if the test process dies (Pdeathsig), so no run leaves JVMs behind.
func startProc(name string, stdoutFile, errFile string, onLine, onErrLine func(string), env []string, script string, args ...string) (*proc, error) {
	out, err := os.Create(stdoutFile)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	errOut := out
	if errFile != stdoutFile {
		if errOut, err = os.Create(errFile); err != nil {
			out.Close()
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	cmd := exec.Command("bash", append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	var pipe, errPipe io.ReadCloser
	if onLine != nil {
		if pipe, err = cmd.StdoutPipe(); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	} else {
		cmd.Stdout = out
	}
	if onErrLine != nil && errOut != out {
		if errPipe, err = cmd.StderrPipe(); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	} else {
		cmd.Stderr = errOut
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	var copied sync.WaitGroup
	copyLines := func(r io.Reader, w io.Writer, f func(string)) {
		defer copied.Done()
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(w, line)
			f(line)
		}
	}
	if pipe != nil {
		copied.Add(1)
		go copyLines(pipe, out, onLine)
	}
	if errPipe != nil {
		copied.Add(1)
		go copyLines(errPipe, errOut, onErrLine)
	}
	go func() {
		copied.Wait() // Wait closes the pipe: read it to the end first
		p.err = cmd.Wait()
		out.Close()
		if errOut != out {
			errOut.Close()
		}
		close(p.done)
	}()
	return p, nil
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends TERM and waits up to timeout, then KILL. It returns the exit error of a process
// that ended on its own before stop was called.
func (p *proc) stop(timeout time.Duration) error {
	if p.exited() {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(timeout):
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	return fmt.Errorf("%s (pid %d) ignored TERM for %s: killed", p.name, p.pid(), timeout)
}

// kill9 kills without warning (a crash) and waits until the process is gone.
func (p *proc) kill9() {
	if p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}
