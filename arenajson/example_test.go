package arenajson_test

import (
	"context"
	"fmt"

	"github.com/arenaprof/arenaprof/arena"
	"github.com/arenaprof/arenaprof/arenajson"
)

type Item struct {
	SKU      string `json:"sku"`
	Quantity int    `json:"qty"`
}

type Order struct {
	ID       string   `json:"id"`
	Customer string   `json:"customer"`
	Items    []Item   `json:"items"`
	Tags     []string `json:"tags"`
}

var pool arena.Pool

func Example() {
	body := []byte(`{"id":"o-17","customer":"Ada","items":[{"sku":"tea","qty":2},{"sku":"cup","qty":1}],"tags":["gift"]}`)

	a := pool.Get(context.Background()) // a handler passes r.Context()
	defer pool.Put(a)                   // o and everything in it must not be used after this

	var o Order
	if err := arenajson.Unmarshal(a, body, &o); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s for %s: %d items, first %s x%d, tags %v\n",
		o.ID, o.Customer, len(o.Items), o.Items[0].SKU, o.Items[0].Quantity, o.Tags)

	// Errors are encoding/json's own.
	err := arenajson.Unmarshal(a, []byte(`{"items":[{"qty":"two"}]}`), &o)
	fmt.Println(err)
	// Output:
	// o-17 for Ada: 2 items, first tea x2, tags [gift]
	// json: cannot unmarshal string into Go struct field Item.items.qty of type int
}
