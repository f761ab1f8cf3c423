package templates

import (
	"strconv"
	"strings"
	"time"
)

// strftime formats t like Python's datetime.strftime in the C locale
// (English day and month names). glibc's "%-d" (no padding) is supported, as
// Linux Python passes it through to the C library.
func strftime(t time.Time, format string) string {
	var b strings.Builder
	pad := func(n, width int, noPad bool) string {
		s := strconv.Itoa(n)
		if noPad {
			return s
		}
		for len(s) < width {
			s = "0" + s
		}
		return s
	}
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 >= len(format) {
			b.WriteByte(c)
			continue
		}
		i++
		noPad := false
		if format[i] == '-' && i+1 < len(format) {
			noPad = true
			i++
		}
		hour12 := t.Hour() % 12
		if hour12 == 0 {
			hour12 = 12
		}
		switch format[i] {
		case 'a':
			b.WriteString(t.Weekday().String()[:3])
		case 'A':
			b.WriteString(t.Weekday().String())
		case 'b', 'h':
			b.WriteString(t.Month().String()[:3])
		case 'B':
			b.WriteString(t.Month().String())
		case 'c':
			b.WriteString(t.Format("Mon Jan _2 15:04:05 2006"))
		case 'd':
			b.WriteString(pad(t.Day(), 2, noPad))
		case 'e':
			b.WriteString(t.Format("_2"))
		case 'f':
			b.WriteString(pad(t.Nanosecond()/1000, 6, false))
		case 'H':
			b.WriteString(pad(t.Hour(), 2, noPad))
		case 'I':
			b.WriteString(pad(hour12, 2, noPad))
		case 'j':
			b.WriteString(pad(t.YearDay(), 3, noPad))
		case 'm':
			b.WriteString(pad(int(t.Month()), 2, noPad))
		case 'M':
			b.WriteString(pad(t.Minute(), 2, noPad))
		case 'p':
			if t.Hour() < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
		case 'S':
			b.WriteString(pad(t.Second(), 2, noPad))
		case 'w':
			b.WriteString(strconv.Itoa(int(t.Weekday())))
		case 'u':
			wd := int(t.Weekday())
			if wd == 0 {
				wd = 7
			}
			b.WriteString(strconv.Itoa(wd))
		case 'y':
			b.WriteString(pad(t.Year()%100, 2, noPad))
		case 'Y':
			b.WriteString(strconv.Itoa(t.Year()))
		case 'x':
			b.WriteString(t.Format("01/02/06"))
		case 'X':
			b.WriteString(t.Format("15:04:05"))
		case 'D':
			b.WriteString(t.Format("01/02/06"))
		case 'F':
			b.WriteString(t.Format("2006-01-02"))
		case 'T':
			b.WriteString(t.Format("15:04:05"))
		case 'R':
			b.WriteString(t.Format("15:04"))
		case 'z':
			b.WriteString(t.Format("-0700"))
		case 'Z':
			b.WriteString(t.Format("MST"))
		case 'U':
			b.WriteString(pad((t.YearDay()+6-int(t.Weekday()))/7, 2, noPad))
		case 'W':
			b.WriteString(pad((t.YearDay()+6-(int(t.Weekday())+6)%7)/7, 2, noPad))
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			if noPad {
				b.WriteByte('-')
			}
			b.WriteByte(format[i])
		}
	}
	return b.String()
}
