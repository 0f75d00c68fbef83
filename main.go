// arena runs server stacks side by side on identical workloads and reports them honestly.
package main

import "github.com/arena-lab/arena/cmd"

func main() { cmd.Execute() }
