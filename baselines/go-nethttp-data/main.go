// net/http's documented shapes for /data/{id}: the floor of go-nethttp on study 002's path.
// http.FileServerFS over the embedded resources, http.Get (the shared http.DefaultClient)
// decoded into a struct with encoding/json.
package main

import (
	"embed"
	"encoding/json"
	"log"
	"net/http"
	"os"
	"strconv"
)

//go:embed resources
var resources embed.FS

type Data struct {
	ID     int      `json:"id"`
	Value  string   `json:"value"`
	Active bool     `json:"active"`
	Props  []string `json:"props"`
}

func main() {
	port := os.Getenv("PORT")

	http.HandleFunc("/instant", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("INSTANT"))
	})

	// The embedded files keep their resources/ prefix, so /resources/data1.json is served as is.
	http.Handle("/resources/", http.FileServerFS(resources))

	http.HandleFunc("GET /data/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.Atoi(r.PathValue("id"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		resp, err := http.Get("http://127.0.0.1:" + port + "/resources/data" + strconv.Itoa(id) + ".json")
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			http.Error(w, resp.Status, http.StatusBadGateway)
			return
		}
		var data Data
		if err := json.NewDecoder(resp.Body).Decode(&data); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(data)
	})

	log.Fatal(http.ListenAndServe("127.0.0.1:"+port, nil))
}
