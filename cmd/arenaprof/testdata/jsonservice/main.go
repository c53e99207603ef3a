// Command jsonservice is a small JSON service on encoding/json and
// net/http, as a newcomer writes one: it decodes an order, totals it and
// encodes the answer. It drives itself over loopback and writes two heap
// profiles of its own process, each right after a GC, around a window of
// requests: DIR/earlier.pb.gz and DIR/later.pb.gz. Run it at a low
// GODEBUG=memprofilerate to see the window's short-lived allocations.
// PAUSE (a Go duration) paces the requests, as a service's load is.
//
//	jsonservice DIR REQUESTS PAUSE
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"time"
)

type item struct {
	SKU   string   `json:"sku"`
	Qty   int      `json:"qty"`
	Price float64  `json:"price"`
	Tags  []string `json:"tags"`
}

type order struct {
	ID    string `json:"id"`
	Items []item `json:"items"`
}

type answer struct {
	ID    string   `json:"id"`
	Total float64  `json:"total"`
	SKUs  []string `json:"skus"`
}

// handleOrder decodes an order and encodes its total.
func handleOrder(w http.ResponseWriter, r *http.Request) {
	var o order
	if err := json.NewDecoder(r.Body).Decode(&o); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	a := answer{ID: o.ID}
	for _, it := range o.Items {
		a.Total += float64(it.Qty) * it.Price
		a.SKUs = append(a.SKUs, it.SKU)
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(a)
}

// body is one request's order of n items.
func body(id, n int) []byte {
	o := order{ID: "order-" + strconv.Itoa(id)}
	for i := range n {
		o.Items = append(o.Items, item{SKU: "sku-" + strconv.Itoa(i), Qty: i%5 + 1, Price: 9.5, Tags: []string{"a", "b", "c"}})
	}
	b, _ := json.Marshal(o)
	return b
}

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: jsonservice DIR REQUESTS PAUSE")
		os.Exit(2)
	}
	pause, err := time.ParseDuration(os.Args[3])
	if err != nil {
		fmt.Fprintln(os.Stderr, "jsonservice: bad PAUSE", os.Args[3])
		os.Exit(2)
	}
	dir := os.Args[1]
	n, err := strconv.Atoi(os.Args[2])
	if err != nil || n < 1 {
		fmt.Fprintln(os.Stderr, "jsonservice: bad REQUESTS", os.Args[2])
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /order", handleOrder)
	go http.Serve(ln, mux)
	url := "http://" + ln.Addr().String() + "/order"
	drive := func(from int) {
		for i := from; i < from+n; i++ {
			resp, err := http.Post(url, "application/json", bytes.NewReader(body(i, 20+i%40)))
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			time.Sleep(pause)
		}
	}
	drive(0)
	for _, name := range []string{"earlier.pb.gz", "later.pb.gz"} {
		runtime.GC() // the runtime publishes the counts of a cycle at its end
		f, err := os.Create(filepath.Join(dir, name))
		if err == nil {
			err = pprof.Lookup("heap").WriteTo(f, 0)
		}
		if err == nil {
			err = f.Close()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if name == "earlier.pb.gz" {
			drive(n)
		}
	}
}
