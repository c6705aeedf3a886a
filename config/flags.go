package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// keyFlag is the value of one key's flag: the text as given, checked with
// the other sources' values after parsing (valueProblem), so a bad flag
// value gets the same words as a bad variable. A key whose default is a
// bool takes the flag alone (--admin-pprof) or with =false.
type keyFlag struct {
	value  string
	isBool bool
}

func (f *keyFlag) String() string {
	if f == nil {
		return ""
	}
	return f.value
}

func (f *keyFlag) Set(s string) error { f.value = s; return nil }

// IsBoolFlag lets the flag package take a bool key's flag without a value.
func (f *keyFlag) IsBoolFlag() bool { return f.isBool }

// commandLine is `streamshift run`'s flag set: one flag per flagKeys entry,
// --config, and the help flags.
type commandLine struct {
	fs         *flag.FlagSet
	configPath *string
	helpAll    *bool
}

func newCommandLine() commandLine {
	fs := flag.NewFlagSet("streamshift run", flag.ContinueOnError)
	// Errors and help are printed by the caller, in its words: the flag
	// package's own would print the whole flag list on any typo.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	cl := commandLine{fs: fs}
	cl.configPath = fs.String("config", "", "YAML configuration file")
	cl.helpAll = fs.Bool("help-all", false, "every configuration key")
	def := flatten(Default())
	for _, f := range flagKeys {
		v := &keyFlag{value: def[f.key], isBool: def[f.key] == "true" || def[f.key] == "false"}
		fs.Var(v, f.flag, meaningOf(f.key))
	}
	return cl
}

// parse parses args; a command line that does not parse is a *UsageError
// in words: an unknown flag with the one it most likely meant.
func (cl commandLine) parse(args []string) error {
	err := cl.fs.Parse(args)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		if err == nil && cl.fs.NArg() > 0 {
			return &UsageError{Msg: cl.strayArgument(args)}
		}
		return err
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		return &UsageError{Msg: unknownFlag(strings.TrimLeft(name, "-"))}
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		name = strings.TrimLeft(name, "-")
		return &UsageError{Msg: fmt.Sprintf("flag --%s needs a value (--%s %s)", name, name, flagArg(keyOfFlag(name)))}
	}
	return &UsageError{Msg: msg}
}

// strayArgument explains the first argument that is not a flag: most often
// the value of a bool flag written apart from it (--admin-pprof false).
func (cl commandLine) strayArgument(args []string) string {
	stray := cl.fs.Arg(0)
	for i := 1; i < len(args); i++ {
		if args[i] != stray {
			continue
		}
		name := strings.TrimLeft(args[i-1], "-")
		if f := cl.fs.Lookup(name); f != nil && strings.HasPrefix(args[i-1], "-") {
			if b, ok := f.Value.(*keyFlag); ok && b.isBool {
				return fmt.Sprintf("unexpected argument %q: a switch takes its value with = (--%s=%s)", stray, name, stray)
			}
		}
		break
	}
	return fmt.Sprintf("unexpected argument %q: flags start with --, and streamshift run takes no arguments", stray)
}

// unknownFlag is the line for a flag that does not exist: with the flag it
// most likely meant, or, when it is a configuration key written as a flag,
// how to set that key.
func unknownFlag(name string) string {
	line := "unknown flag --" + name
	names := []string{"config", "help-all"}
	for _, f := range flagKeys {
		names = append(names, f.flag)
	}
	if f := flagOf(name); f != "" {
		return fmt.Sprintf("%s (the key %s is set with --%s)", line, name, f)
	}
	if s := closest(name, names); s != "" {
		return fmt.Sprintf("%s (did you mean --%s?)", line, s)
	}
	return line + " (every flag: streamshift run --help-all)"
}

// keyOfFlag is the key a flag sets, empty if none.
func keyOfFlag(name string) string {
	for _, f := range flagKeys {
		if f.flag == name {
			return f.key
		}
	}
	return ""
}

// flagOf is key's flag name, empty if it has none.
func flagOf(key string) string {
	for _, f := range flagKeys {
		if f.key == key {
			return f.flag
		}
	}
	return ""
}
