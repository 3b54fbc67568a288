// Bodies of the messages on the two queues. D1 is the source of truth; a message only names the work.
export interface RunMessage {
  run_id: string;
}

export interface DeliveryMessage {
  delivery_id: string;
}
