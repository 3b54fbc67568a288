// JSON as it is stored in a column or sent in a body: the type of a value JSON.parse could give back.
export type Json = string | number | boolean | null | Json[] | JsonObject;
export type JsonObject = { [key: string]: Json };
