package capture

import (
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// WriteHTML writes the timeline as one self-contained page (no network
// fetch): swimlanes per member with their protocol, epochs, assignments and
// errors; a band per task with its owners, gaps and overlaps; the migration
// steps and the coordinator's epoch bumps as markers; zoom with the slider
// or ctrl+wheel. Every shape carries its position as a fraction of the
// capture (data-f0, data-f1), so zooming rescales without re-rendering.
func (t *Timeline) WriteHTML(w io.Writer) error {
	return timelinePage.Execute(w, t.view())
}

type htmlView struct {
	T                 *Timeline
	Duration          string
	Overlaps, Gaps    int
	RebalanceGaps     int
	Stalls            int
	StallTotal        string
	StallLongest      string
	Lanes             []htmlLane
	Tasks             []htmlTask
	Phases            []htmlShape
	PhaseItems        []htmlPhase
	Marks             []htmlShape
	Ticks             []htmlShape
	Height, LaneTop   int
	TaskTop, PhaseBot int
}

type htmlLane struct {
	// Name is the lane's label, ClientID its key (data-member: tests
	// and tools find a lane by it).
	Name, ClientID, Members string
	Y                       int
	Shapes                  []htmlShape
}

// htmlPhase is a migration step in the page's list.
type htmlPhase struct{ Kind, Span, Outcome, Reason string }

type htmlTask struct {
	Task   string
	Y      int
	Shapes []htmlShape
}

type htmlShape struct {
	Class, Label, Title, Color string
	F0, F1                     float64
	Y, H                       int
}

const (
	laneH = 34
	taskH = 16
)

var laneColors = []string{"#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#9c755f", "#ff9da7", "#bab0ac", "#e15759"}

func (t *Timeline) view() htmlView {
	span := t.End.Sub(t.Start)
	if span <= 0 {
		span = time.Millisecond
	}
	f := func(at time.Time) float64 { return float64(at.Sub(t.Start)) / float64(span) }
	rel := func(at time.Time) string { return "+" + at.Sub(t.Start).Round(time.Millisecond).String() }
	v := htmlView{T: t, Duration: span.Round(time.Millisecond).String(), LaneTop: 40}
	n, total, longest := t.StallTotals()
	v.Stalls, v.StallTotal, v.StallLongest = n, total.Round(time.Millisecond).String(), longest.Round(time.Millisecond).String()
	color := map[string]string{}
	y := v.LaneTop
	for i, ln := range t.Lanes {
		color[ln.ClientID] = laneColors[i%len(laneColors)]
		// The label is shown; the client id and member ids are a hover
		// away (the title).
		hl := htmlLane{Name: ln.Label, ClientID: ln.ClientID, Members: "client id " + ln.ClientID + "\nmember ids " + strings.Join(ln.MemberIDs, " "), Y: y}
		for j, p := range ln.Protocols {
			to := t.End
			if j+1 < len(ln.Protocols) {
				to = ln.Protocols[j+1].At
			}
			// The protocol's band is drawn only while the member was in
			// the group: its times away are drawn as such.
			for _, in := range present(p.At, to, ln.Away) {
				hl.Shapes = append(hl.Shapes, htmlShape{Class: "proto proto-" + p.Value, Label: p.Value, Title: p.Value + " from " + rel(in.From), F0: f(in.From), F1: f(in.To), Y: y + 2, H: laneH - 4})
			}
		}
		for _, a := range ln.Away {
			hl.Shapes = append(hl.Shapes, htmlShape{Class: "away", Label: "away", Title: fmt.Sprintf("out of the group %s..%s (%s)", rel(a.From), rel(a.To), a.Dur().Round(time.Millisecond)), F0: f(a.From), F1: f(a.To), Y: y + 2, H: laneH - 4})
		}
		for _, ws := range []struct {
			list  []At[[]string]
			class string
			what  string
		}{{ln.Warmups, "warmup", "warms up"}, {ln.Standbys, "standby", "standbys"}} {
			eachTaskSpan(ws.list, t.End, func(from, to time.Time, label string) {
				hl.Shapes = append(hl.Shapes, htmlShape{Class: ws.class, Label: ws.class + " " + label, Title: rel(from) + " " + ws.what + " " + label, F0: f(from), F1: f(to), Y: y + 28, H: 5, Color: color[ln.ClientID]})
			})
		}
		eachTaskSpan(ln.Owned, t.End, func(from, to time.Time, label string) {
			hl.Shapes = append(hl.Shapes, htmlShape{Class: "owned", Label: label, Title: rel(from) + " owns " + label, F0: f(from), F1: f(to), Y: y + 14, H: 14, Color: color[ln.ClientID]})
		})
		for _, e := range ln.Epochs {
			hl.Shapes = append(hl.Shapes, htmlShape{Class: "epoch", Title: e.Value + " at " + rel(e.At), F0: f(e.At), F1: f(e.At), Y: y + 2, H: 10})
		}
		for _, e := range ln.ErrorsAt {
			hl.Shapes = append(hl.Shapes, htmlShape{Class: "error", Title: e.Value + " at " + rel(e.At), F0: f(e.At), F1: f(e.At), Y: y + 6, H: 4})
		}
		v.Lanes = append(v.Lanes, hl)
		y += laneH
	}
	y += 24
	v.TaskTop = y
	for _, th := range t.Tasks {
		ht := htmlTask{Task: th.Task, Y: y}
		for _, s := range th.Owners {
			ht.Shapes = append(ht.Shapes, htmlShape{Class: "owner", Title: th.Task + ": " + t.LabelOf(s.Lane) + " " + rel(s.From) + ".." + rel(s.To), F0: f(s.From), F1: f(s.To), Y: y + 2, H: taskH - 4, Color: color[s.Lane]})
		}
		for _, g := range th.Gaps {
			class, why := "gap", "no owner"
			if g.Rebalance {
				class, why = "gap rebalance", "no owner while a rebalance moved it"
				v.RebalanceGaps++
			} else {
				v.Gaps++
			}
			ht.Shapes = append(ht.Shapes, htmlShape{Class: class, Title: fmt.Sprintf("%s: %s %s..%s (%s)", th.Task, why, rel(g.From), rel(g.To), g.Dur().Round(time.Millisecond)), F0: f(g.From), F1: f(g.To), Y: y + 2, H: taskH - 4})
		}
		// A stall over its owner's or gap's shape: the task ran nowhere.
		for _, st := range t.Stalls {
			if st.Task == th.Task {
				ht.Shapes = append(ht.Shapes, htmlShape{Class: "stalled", Title: fmt.Sprintf("%s: STALLED %s..%s (%s): ran nowhere, %s %s", th.Task, rel(st.From), rel(st.To), st.Dur().Round(time.Millisecond), t.LabelOf(st.Owner), st.Why), F0: f(st.From), F1: f(st.To), Y: y + 1, H: taskH - 2})
			}
		}
		for _, o := range th.Overlaps {
			v.Overlaps++
			ht.Shapes = append(ht.Shapes, htmlShape{Class: "overlap", Title: fmt.Sprintf("%s: two owners %s..%s: %s", th.Task, rel(o.From), rel(o.To), t.LabelOf(o.Lane)), F0: f(o.From), F1: f(o.To), Y: y, H: taskH})
		}
		v.Tasks = append(v.Tasks, ht)
		y += taskH
	}
	v.Height = y + 10
	for _, p := range t.Phases {
		title := fmt.Sprintf("%s %s %s %s", p.Kind, p.span(t.End, rel), p.Outcome, p.Reason)
		// The band is the step as the app lived it: from its first
		// request until every task ran again.
		to := p.To
		if !p.Settled.IsZero() {
			to = p.Settled
		} else if p.Outcome == "done" {
			to = t.End
		}
		v.PhaseItems = append(v.PhaseItems, htmlPhase{p.Kind, p.span(t.End, rel), p.Outcome, p.Reason})
		v.Phases = append(v.Phases, htmlShape{Class: "phase phase-" + p.Kind, Label: p.Kind, Title: title, F0: f(p.Began), F1: f(to), Y: 20, H: v.Height - 20})
	}
	for _, m := range t.Marks {
		if m.Kind != streams.EventGroupEpochBumped && m.Kind != streams.EventMemberFenced {
			continue
		}
		v.Marks = append(v.Marks, htmlShape{Class: "mark mark-" + m.Kind, Title: rel(m.At) + " " + m.Message, F0: f(m.At), F1: f(m.At), Y: 20, H: v.Height - 20})
	}
	for i := 0; i <= 10; i++ {
		at := t.Start.Add(span * time.Duration(i) / 10)
		class := "tick"
		if i == 10 {
			class = "tick tick-end" // ends at the axis's end, not past it
		}
		v.Ticks = append(v.Ticks, htmlShape{Class: class, Label: rel(at), F0: float64(i) / 10, F1: float64(i) / 10, Y: 12})
	}
	return v
}

// present are the parts of from..to outside the spans away (sorted, as a
// lane's are).
func present(from, to time.Time, away []Span) []Span {
	var out []Span
	at := from
	for _, a := range away {
		if !a.To.After(at) || !a.From.Before(to) {
			continue
		}
		if a.From.After(at) {
			out = append(out, Span{From: at, To: a.From})
		}
		at = a.To
	}
	if to.After(at) {
		out = append(out, Span{From: at, To: to})
	}
	return out
}

var timelinePage = template.Must(template.New("timeline").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>streamshift timeline: {{.T.Group}}</title>
<style>
body{font:13px system-ui,sans-serif;margin:12px;color:#222}
h1{font-size:18px;margin:0 0 4px}
.summary span{margin-right:16px}
.bad{color:#c00;font-weight:bold}
#wrap{display:flex;border:1px solid #ccc}
#labels{flex:none;width:220px;position:relative;border-right:1px solid #ccc;background:#fafafa}
#labels div{position:absolute;left:4px;right:4px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
#scroll{overflow-x:auto;flex:1;min-width:0}
.proto-classic{fill:#dbe7f5}.proto-streams{fill:#dcf1d8}
.owned{stroke:#fff;stroke-width:.5}
.away{fill:url(#hatch-light)}.warmup{fill-opacity:.45}.standby{fill-opacity:.2}
.epoch{fill:#333}.error{fill:#d00}
.gap{fill:url(#hatch)}.gap.rebalance{fill:#ddd}.overlap{fill:#e00;fill-opacity:.7}
.stalled{fill:url(#hatch-red);stroke:#c00;stroke-width:1}
#legend span{margin-right:14px;white-space:nowrap}#legend svg{vertical-align:middle;margin-right:4px}
.phase-takeover{fill:#ffd54f;fill-opacity:.25}.phase-hand-back{fill:#ce93d8;fill-opacity:.25}
.mark{stroke:#888;stroke-dasharray:2 3}.mark-member-fenced{stroke:#d00}
text{font-size:10px;pointer-events:none}
.phase-label{font-weight:bold;font-size:11px}
.tick-end{text-anchor:end}
</style></head><body>
<h1>group {{.T.Group}}</h1>
<div class="summary"><span>{{.T.Start.UTC.Format "2006-01-02 15:04:05.000"}} UTC, {{.Duration}}</span>
<span>{{len .Lanes}} members</span><span>{{len .Tasks}} tasks</span>
<span {{if .Overlaps}}class="bad"{{end}} id="overlaps">{{.Overlaps}} times a task had two owners</span>
<span {{if .Gaps}}class="bad"{{end}} id="gaps">{{.Gaps}} times a task had no owner outside a rebalance</span>
<span id="rebalance-gaps">{{.RebalanceGaps}} times while a rebalance moved it</span>
<span {{if .Stalls}}class="bad"{{end}} id="stalls">{{.Stalls}} stalls (a task ran nowhere, its owner gone): {{.StallTotal}} task-time, the longest {{.StallLongest}}</span>
<label>zoom <input id="zoom" type="range" min="1" max="40" step="0.5" value="1"></label></div>
<ul id="phases">{{range .PhaseItems}}<li class="phase-item" data-phase="{{.Kind}}">{{.Kind}}: {{.Span}} {{.Outcome}} {{.Reason}}</li>{{end}}</ul>
{{range .T.Problems}}<div class="bad">input: {{.}}</div>{{end}}
<div id="legend"><svg width="0" height="0"><defs><pattern id="hatch-red" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#fde0e0"/><rect width="3" height="6" fill="#d00"/></pattern></defs></svg>
<span><svg width="22" height="12"><rect width="22" height="12" fill="#6a9fd8"/></svg>running (its owner there)</span>
<span><svg width="22" height="12"><rect class="stalled" width="22" height="12"/></svg>stalled: ran nowhere, its owner gone</span>
<span><svg width="22" height="12"><rect width="22" height="12" fill="#ddd"/></svg>moving in a rebalance</span>
<span><svg width="22" height="12"><rect width="22" height="12" fill="url(#hatch)"/></svg>no owner outside a rebalance</span>
<span><svg width="22" height="12"><rect width="22" height="12" fill="#e00" fill-opacity=".7"/></svg>two owners</span>
<span><svg width="22" height="12"><rect width="22" height="12" fill="url(#hatch-light)"/></svg>member out of the group</span></div>
<div id="wrap"><div id="labels" style="height:{{.Height}}px">
{{range .Lanes}}<div class="member" data-member="{{.ClientID}}" title="{{.Members}}" style="top:{{.Y}}px;line-height:34px">{{.Name}}</div>{{end}}
{{range .Tasks}}<div class="task" data-task="{{.Task}}" style="top:{{.Y}}px;line-height:16px;font-size:11px">task {{.Task}}</div>{{end}}
</div><div id="scroll"><svg id="tl" height="{{.Height}}" width="1000" xmlns="http://www.w3.org/2000/svg">
<defs><pattern id="hatch-light" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="8" height="8" fill="#f4f4f4"/><rect width="2" height="8" fill="#ccc"/></pattern><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="3" height="6" fill="#999"/></pattern></defs>
{{range .Ticks}}<text class="z {{.Class}}" data-f0="{{.F0}}" data-f1="{{.F1}}" y="{{.Y}}">{{.Label}}</text>{{end}}
{{range .Phases}}<g><title>{{.Title}}</title><rect class="z {{.Class}}" data-f0="{{.F0}}" data-f1="{{.F1}}" y="{{.Y}}" height="{{.H}}"></rect></g><text class="z phase-label" data-f0="{{.F0}}" data-f1="{{.F0}}" y="32">{{.Label}}</text>{{end}}
{{range .Lanes}}{{range .Shapes}}<g><title>{{.Title}}</title><rect class="z {{.Class}}" data-f0="{{.F0}}" data-f1="{{.F1}}" y="{{.Y}}" height="{{.H}}"{{if .Color}} fill="{{.Color}}"{{end}}></rect></g>{{if .Label}}<text class="z" data-f0="{{.F0}}" data-f1="{{.F0}}" y="{{.Y}}" dy="11" dx="2">{{.Label}}</text>{{end}}{{end}}{{end}}
{{range .Tasks}}{{range .Shapes}}<g><title>{{.Title}}</title><rect class="z {{.Class}}" data-f0="{{.F0}}" data-f1="{{.F1}}" y="{{.Y}}" height="{{.H}}"{{if .Color}} fill="{{.Color}}"{{end}}></rect></g>{{end}}{{end}}
{{range .Marks}}<g><title>{{.Title}}</title><line class="z {{.Class}}" data-f0="{{.F0}}" data-f1="{{.F1}}" y1="{{.Y}}" y2="{{.H}}"></line></g>{{end}}
</svg></div></div>
<script>
(function(){
  // The time axis at zoom 1 fills the window's width beside the labels.
  var svg=document.getElementById('tl'), scroll=document.getElementById('scroll'), zoom=1;
  function layout(){
    var base=Math.max(400, scroll.clientWidth-20), w=base*zoom; svg.setAttribute('width', w+10);
    svg.querySelectorAll('.z').forEach(function(e){
      var a=parseFloat(e.dataset.f0)*w+5, b=parseFloat(e.dataset.f1)*w+5;
      if(e.tagName==='rect'){e.setAttribute('x',a);e.setAttribute('width',Math.max(b-a,2));}
      else if(e.tagName==='line'){e.setAttribute('x1',a);e.setAttribute('x2',a);}
      else {e.setAttribute('x',a);}
    });
  }
  var z=document.getElementById('zoom');
  z.addEventListener('input',function(){zoom=parseFloat(z.value);layout();});
  document.getElementById('scroll').addEventListener('wheel',function(ev){
    if(!ev.ctrlKey)return; ev.preventDefault();
    zoom=Math.min(40,Math.max(1,zoom*(ev.deltaY<0?1.25:0.8))); z.value=zoom; layout();
  },{passive:false});
  window.addEventListener('resize', layout);
  layout();
})();
</script></body></html>
`))

// eachTaskSpan calls span for every non-empty set of tasks a member held,
// from the moment it got them to the next change (or end), with the
// tasks as one label.
func eachTaskSpan(list []At[[]string], end time.Time, span func(from, to time.Time, label string)) {
	for j, o := range list {
		to := end
		if j+1 < len(list) {
			to = list[j+1].At
		}
		if len(o.Value) > 0 {
			span(o.At, to, strings.Join(o.Value, " "))
		}
	}
}
