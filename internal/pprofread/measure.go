package pprofread

import (
	"io"
	"math"
)

// After a refusal, Read reads on to measure what the whole profile
// needs, so that the error can say which bound to raise and to what. It
// keeps none of the data: only the record being scanned (of a protobuf
// message) or the counts of the lines read (of legacy text).

// measureFactor and measureMin bound the data read past a refusal,
// decompressed: at most measureFactor times the size bound more, or
// measureMin if that is more; past it the figures are lower bounds.
// Measuring holds no data: it costs the time to read and decompress.
const (
	measureFactor = 4
	measureMin    = 4 << 30
)

// textCount counts, in data that arrives in pieces, what scanText counts:
// the lines holding more than blanks or a comment, and the addresses
// (0x...) on them.
type textCount struct {
	lines, addrs int64
	lineAddrs    int64 // addresses on the current line
	lead         bool  // still in the current line's leading blanks
	counted      bool  // the current line holds more than blanks and is no comment
	prev         byte
}

func (c *textCount) feed(b []byte) {
	for _, ch := range b {
		if ch == '\n' {
			c.end()
			continue
		}
		if c.lead {
			if ch == ' ' || ch == '\t' || ch == '\r' {
				continue
			}
			c.lead, c.counted = false, ch != '#'
		}
		if ch == 'x' && c.prev == '0' && c.counted {
			c.lineAddrs++
			ch = 0 // "0x0x": the second 0 starts anew
		}
		c.prev = ch
	}
}

// end ends the current line.
func (c *textCount) end() {
	if c.counted {
		c.lines++
		c.addrs += c.lineAddrs
	}
	*c = textCount{lines: c.lines, addrs: c.addrs, lead: true}
}

// measureRest reads what remains of src after data (the decompressed data
// read so far, which sc has scanned) and returns the whole data's
// decompressed size and the memory Read would count for it at its end
// (see Read's need), and whether they are exact: false when it stopped
// after maxRead more bytes, or at a record longer than maxRecord, which
// it would have to hold.
func measureRest(src io.Reader, data []byte, sc memScan, maxRead, maxRecord int64) (size, need int64, exact bool) {
	head := append([]byte(nil), data[:min(len(data), 64)]...)
	text := looksText(head)
	var tc textCount
	tc.lead = true
	if text {
		tc.feed(data)
	}
	// The protobuf records from sc.pos on, scanned by t.
	var t memScan
	broken := sc.broken
	var tail []byte
	if !broken {
		tail = append(tail, data[sc.pos:]...)
	}
	size = int64(len(data))
	var read int64
	buf := make([]byte, readChunk)
	exact = true
	for {
		n, err := src.Read(buf)
		size += int64(n)
		read += int64(n)
		if text {
			tc.feed(buf[:n])
		}
		if !broken && n > 0 {
			tail = append(tail, buf[:n]...)
			t.scan(tail)
			broken = t.broken
			if t.pos > 0 {
				tail = append(tail[:0], tail[t.pos:]...)
				if t.need > 0 {
					t.need -= int64(t.pos)
				}
				t.pos = 0
			}
			if broken {
				tail = nil
			} else if int64(len(tail)) > maxRecord {
				exact = false
				break
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil || read > maxRead {
			exact = false
			break
		}
	}
	cost := sc.cost + t.cost + costProfile
	need = 4*size + cost
	legacy := broken || len(tail) > 0 || text
	switch {
	case legacy && text:
		if exact {
			tc.end()
		}
		need += legacyTextPerByte*size + legacyTextPerLine*tc.lines + legacyTextPerAddr*tc.addrs
	case legacy:
		need += legacyCostPerByte * size
	}
	if len(tail) > 0 && t.need > 0 {
		// A record declared longer than the data: Read counts it whole.
		end := size - int64(len(tail)) + min(t.need, math.MaxInt64/8)
		need = max(need, 4*min(end, math.MaxInt64/8)+cost-costProfile)
	}
	return size, need, exact
}
