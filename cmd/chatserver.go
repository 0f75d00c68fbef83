package cmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/arena-lab/arena/internal/chat"
)

func newChatServerCmd() *cobra.Command {
	var port int
	cmd := &cobra.Command{
		Use:   "chat-server",
		Short: "Serve the lab's reference /chat (the contract's chat, in Go) until stopped",
		Long: `A small, correct implementation of the /chat contract: the baseline arena bench chat
measures the client against, and a reference for anyone writing a contender's chat.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if port < 0 || port > 65535 {
				return fmt.Errorf("--port %d: give 0 (any free port) to 65535", port)
			}
			s, err := chat.StartServer(fmt.Sprintf("127.0.0.1:%d", port))
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "ws://"+s.Addr()+"/chat")
			<-cmd.Context().Done()
			return s.Close()
		},
	}
	cmd.Flags().IntVar(&port, "port", 0, "port on 127.0.0.1 (0: any free port, printed on start)")
	return cmd
}
