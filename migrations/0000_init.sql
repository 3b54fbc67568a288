CREATE TABLE `accounts` (
	`id` text PRIMARY KEY NOT NULL,
	`email` text NOT NULL,
	`plan` text NOT NULL,
	`overrides` text DEFAULT '{}' NOT NULL,
	`free_credits_micro` integer DEFAULT 0 NOT NULL,
	`paid_credits_micro` integer DEFAULT 0 NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `accounts_email_unique` ON `accounts` (`email`);--> statement-breakpoint
CREATE TABLE `api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`prefix` text NOT NULL,
	`key_hash` text NOT NULL,
	`name` text NOT NULL,
	`scopes` text NOT NULL,
	`expires_at` text,
	`revoked_at` text,
	`last_used_at` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_prefix_uq` ON `api_keys` (`prefix`);--> statement-breakpoint
CREATE INDEX `api_keys_account_idx` ON `api_keys` (`account_id`);--> statement-breakpoint
CREATE TABLE `credit_ledger` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`kind` text NOT NULL,
	`run_id` text,
	`submission_id` text,
	`amount_micro` integer NOT NULL,
	`free_delta_micro` integer NOT NULL,
	`paid_delta_micro` integer NOT NULL,
	`cpu_seconds` real,
	`gb_seconds` real,
	`created_at` text NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `credit_ledger_run_uq` ON `credit_ledger` (`run_id`);--> statement-breakpoint
CREATE INDEX `credit_ledger_account_created_idx` ON `credit_ledger` (`account_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`webhook_id` text NOT NULL,
	`event_id` text NOT NULL,
	`event_type` text NOT NULL,
	`body` text NOT NULL,
	`status` text NOT NULL,
	`attempt_count` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` text,
	`enqueued_at` text,
	`last_attempt_at` text,
	`replay_of` text,
	`is_test` integer DEFAULT false NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`webhook_id`) REFERENCES `webhooks`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`event_id`) REFERENCES `events`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `deliveries_status_next_idx` ON `deliveries` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE INDEX `deliveries_webhook_created_idx` ON `deliveries` (`webhook_id`,`created_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `deliveries_event_webhook_uq` ON `deliveries` (`event_id`,`webhook_id`);--> statement-breakpoint
CREATE TABLE `delivery_attempts` (
	`id` text PRIMARY KEY NOT NULL,
	`delivery_id` text NOT NULL,
	`attempt_no` integer NOT NULL,
	`request_url` text NOT NULL,
	`request_headers` text NOT NULL,
	`response_status` integer,
	`response_headers` text,
	`response_body` text,
	`duration_ms` integer NOT NULL,
	`network_error` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`delivery_id`) REFERENCES `deliveries`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `delivery_attempts_delivery_no_uq` ON `delivery_attempts` (`delivery_id`,`attempt_no`);--> statement-breakpoint
CREATE TABLE `events` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`type` text NOT NULL,
	`data` text NOT NULL,
	`occurred_at` text NOT NULL,
	`submission_id` text,
	`run_id` text,
	`origin` text DEFAULT 'run' NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `events_account_created_idx` ON `events` (`account_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `events_run_idx` ON `events` (`run_id`);--> statement-breakpoint
CREATE INDEX `events_account_origin_created_idx` ON `events` (`account_id`,`origin`,`created_at`);--> statement-breakpoint
CREATE TABLE `result_files` (
	`result_id` text NOT NULL,
	`name` text NOT NULL,
	`content_type` text NOT NULL,
	`size_bytes` integer NOT NULL,
	`r2_key` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`result_id`, `name`),
	FOREIGN KEY (`result_id`) REFERENCES `results`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `results` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`submission_id` text NOT NULL,
	`run_id` text NOT NULL,
	`name` text NOT NULL,
	`is_shared` integer DEFAULT false NOT NULL,
	`best_solution` text NOT NULL,
	`best_solution_fitness` real,
	`best_solution_generation` integer,
	`best_solutions_fitness` text NOT NULL,
	`generations_completed` integer NOT NULL,
	`stopped_reason` text NOT NULL,
	`parameters` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `results_run_uq` ON `results` (`run_id`);--> statement-breakpoint
CREATE INDEX `results_account_created_idx` ON `results` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `results_account_fitness_idx` ON `results` (`account_id`,`best_solution_fitness`,`id`);--> statement-breakpoint
CREATE INDEX `results_account_submission_created_idx` ON `results` (`account_id`,`submission_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `results_account_shared_created_idx` ON `results` (`account_id`,`is_shared`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `runs` (
	`id` text PRIMARY KEY NOT NULL,
	`submission_id` text NOT NULL,
	`account_id` text NOT NULL,
	`kind` text NOT NULL,
	`parent_result_id` text,
	`status` text NOT NULL,
	`parameters` text NOT NULL,
	`paid_with_credits` integer DEFAULT true NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`queued_at` text NOT NULL,
	`enqueued_at` text NOT NULL,
	`started_at` text,
	`heartbeat_at` text,
	`finished_at` text,
	`generations_completed` integer,
	`best_solution_fitness` real,
	`execution_duration_ms` integer,
	`cpu_seconds_used` real,
	`peak_memory_mb` integer,
	`hit_time_cap` integer DEFAULT false NOT NULL,
	`hit_memory_cap` integer DEFAULT false NOT NULL,
	`error_code` text,
	`error_message` text,
	`output` text,
	`engine` text,
	`credits_charged_micro` integer,
	`terminal_token` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`submission_id`) REFERENCES `submissions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `runs_submission_idx` ON `runs` (`submission_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `runs_status_queued_idx` ON `runs` (`status`,`enqueued_at`);--> statement-breakpoint
CREATE INDEX `runs_status_heartbeat_idx` ON `runs` (`status`,`heartbeat_at`);--> statement-breakpoint
CREATE TABLE `submissions` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`name` text NOT NULL,
	`name_lower` text NOT NULL,
	`source` text NOT NULL,
	`submission_type` text DEFAULT 'new' NOT NULL,
	`status` text NOT NULL,
	`parameters` text NOT NULL,
	`latest_run_id` text NOT NULL,
	`run_count` integer DEFAULT 1 NOT NULL,
	`credits_charged_micro` integer DEFAULT 0 NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `submissions_account_created_idx` ON `submissions` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `submissions_account_name_idx` ON `submissions` (`account_id`,`name`,`id`);--> statement-breakpoint
CREATE INDEX `submissions_account_status_idx` ON `submissions` (`account_id`,`status`,`id`);--> statement-breakpoint
CREATE INDEX `submissions_account_source_created_idx` ON `submissions` (`account_id`,`source`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `webhooks` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`url` text NOT NULL,
	`events` text NOT NULL,
	`is_active` integer DEFAULT true NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`secret` text NOT NULL,
	`last_delivery_status` text DEFAULT '' NOT NULL,
	`last_delivery_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhooks_account_created_idx` ON `webhooks` (`account_id`,`created_at`,`id`);