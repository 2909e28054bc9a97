package voicetest

import (
	"bytes"
	"fmt"
	"strings"
)

// ReportSection is an extra part of a scenario's report that its User or
// Judge contributes: a red-team attacker's attempts, say. The HTML report
// shows it after the timeline, and Scenario logs it.
type ReportSection struct {
	// Title heads the section ("Red team (crescendo)").
	Title string `json:"title"`
	// Summary is a paragraph under the title.
	Summary string `json:"summary,omitempty"`
	// Columns name the table's columns; Rows are its rows.
	Columns []string    `json:"columns,omitempty"`
	Rows    []ReportRow `json:"rows,omitempty"`
}

// ReportRow is one row of a ReportSection's table.
type ReportRow struct {
	// Cells are the row's values, one per column.
	Cells []string `json:"cells"`
	// Mark highlights the row: "fail" (the agent gave way), "warn",
	// "pass", or "" for none.
	Mark string `json:"mark,omitempty"`
}

// SectionReporter is implemented by a User or a Judge that adds sections
// to the scenario's report (personas.RedTeamUser does). ReportSections is
// called once the conversation is over.
type SectionReporter interface {
	ReportSections() []ReportSection
}

// reportSections collects the sections of cfg's User and Judge.
func reportSections(cfg Config) []ReportSection {
	var out []ReportSection
	for _, v := range []any{cfg.User, cfg.Judge} {
		if sr, ok := v.(SectionReporter); ok {
			out = append(out, sr.ReportSections()...)
		}
	}
	return out
}

// Text renders the section as plain text for a log: the title, the
// summary, and one line per row with its mark.
func (s ReportSection) Text() string {
	var b strings.Builder
	b.WriteString(s.Title)
	if s.Summary != "" {
		fmt.Fprintf(&b, ": %s", s.Summary)
	}
	for _, r := range s.Rows {
		b.WriteString("\n  ")
		if r.Mark != "" {
			fmt.Fprintf(&b, "[%s] ", r.Mark)
		}
		for i, c := range r.Cells {
			if i > 0 {
				b.WriteString(" | ")
			}
			if i < len(s.Columns) && s.Columns[i] != "" {
				fmt.Fprintf(&b, "%s: ", s.Columns[i])
			}
			b.WriteString(strings.Join(strings.Fields(c), " "))
		}
	}
	return b.String()
}

// writeSections writes the report's extra sections, after the timeline:
// each a card with its title, its summary and its table, every value
// escaped (a row's mark lands in a class attribute).
func writeSections(w *bytes.Buffer, sections []ReportSection) {
	for _, s := range sections {
		w.WriteString("\n<section class=\"card extra\">\n  <h2>")
		writeEscaped(w, s.Title)
		w.WriteString("</h2>\n  ")
		if s.Summary != "" {
			w.WriteString("<p>")
			writeEscaped(w, s.Summary)
			w.WriteString("</p>")
		}
		w.WriteString("\n  ")
		if len(s.Columns) > 0 {
			w.WriteString("<table class=\"extra\">\n    <thead><tr>")
			for _, c := range s.Columns {
				w.WriteString("<th>")
				writeEscaped(w, c)
				w.WriteString("</th>")
			}
			w.WriteString("</tr></thead>\n    <tbody>\n    ")
			for _, r := range s.Rows {
				w.WriteString("<tr")
				if r.Mark != "" {
					w.WriteString(" class=\"mark-")
					writeEscaped(w, r.Mark)
					w.WriteString("\"")
				}
				w.WriteString(">")
				for _, c := range r.Cells {
					w.WriteString("<td>")
					writeEscaped(w, c)
					w.WriteString("</td>")
				}
				w.WriteString("</tr>\n    ")
			}
			w.WriteString("\n    </tbody>\n  </table>")
		}
		w.WriteString("\n</section>\n")
	}
}
