// The net/http package documentation's server, answering /instant and nothing else.
package main

import (
	"log"
	"net/http"
	"os"
)

func main() {
	http.HandleFunc("/instant", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("INSTANT"))
	})
	log.Fatal(http.ListenAndServe("127.0.0.1:"+os.Getenv("PORT"), nil))
}
