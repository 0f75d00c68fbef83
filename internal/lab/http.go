package lab

import (
	"io"
	"net/http"
	"time"
)

// httpClient is a tiny helper for the lab's own side requests (not the load).
type httpClient struct{ timeout time.Duration }

func (c *httpClient) get(url string) (int, error) {
	resp, err := (&http.Client{Timeout: c.timeout}).Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}
