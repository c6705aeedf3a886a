package config

import "flag"

// defineFlag adds a key's flag: a boolean key's flag may stand alone
// (--upstream-tls-enabled is --upstream-tls-enabled=true), as Go's bool
// flags do; every value is kept as the string the key is set from.
func defineFlag(fs *flag.FlagSet, name, def, usage string) {
	if def == "true" || def == "false" {
		v := boolFlag(def)
		fs.Var(&v, name, usage)
		return
	}
	fs.String(name, def, usage)
}

type boolFlag string

func (b *boolFlag) String() string     { return string(*b) }
func (b *boolFlag) Set(s string) error { *b = boolFlag(s); return nil }
func (b *boolFlag) IsBoolFlag() bool   { return true }
