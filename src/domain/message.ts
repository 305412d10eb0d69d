/** Who says a message in a conversation sent to a chat model. */
export type ChatRole = 'system' | 'user' | 'assistant';

/** One message sent to a chat model; stored as is with the turn that sent it. */
export interface ChatMessage {
  role: ChatRole;
  content: string;
}
