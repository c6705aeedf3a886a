package proxy

import (
	"fmt"

	"github.com/rs/zerolog"
)

// gnetLogger sends gnet's own log lines to zerolog.
type gnetLogger struct{ log zerolog.Logger }

func (l gnetLogger) Debugf(format string, args ...any) {
	l.log.Debug().Str("component", "gnet").Msg(fmt.Sprintf(format, args...))
}
func (l gnetLogger) Infof(format string, args ...any) {
	l.log.Debug().Str("component", "gnet").Msg(fmt.Sprintf(format, args...))
}
func (l gnetLogger) Warnf(format string, args ...any) {
	l.log.Warn().Str("component", "gnet").Msg(fmt.Sprintf(format, args...))
}
func (l gnetLogger) Errorf(format string, args ...any) {
	l.log.Error().Str("component", "gnet").Msg(fmt.Sprintf(format, args...))
}
func (l gnetLogger) Fatalf(format string, args ...any) {
	l.log.Error().Str("component", "gnet").Msg(fmt.Sprintf(format, args...))
}
