CREATE TABLE `data_blobs` (
	`account_id` text NOT NULL,
	`sha256` text NOT NULL,
	`size_bytes` integer NOT NULL,
	`r2_key` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`account_id`, `sha256`),
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `data_blobs_r2_key_idx` ON `data_blobs` (`r2_key`);--> statement-breakpoint
CREATE TABLE `data_files` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`name` text NOT NULL,
	`content_type` text NOT NULL,
	`size_bytes` integer NOT NULL,
	`sha256` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`account_id`,`sha256`) REFERENCES `data_blobs`(`account_id`,`sha256`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `data_files_account_created_idx` ON `data_files` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `data_files_account_sha_idx` ON `data_files` (`account_id`,`sha256`);--> statement-breakpoint
CREATE TABLE `submission_data_files` (
	`submission_id` text NOT NULL,
	`data_file_id` text NOT NULL,
	`account_id` text NOT NULL,
	`name` text NOT NULL,
	`content_type` text NOT NULL,
	`size_bytes` integer NOT NULL,
	`sha256` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`submission_id`, `data_file_id`),
	FOREIGN KEY (`submission_id`) REFERENCES `submissions`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`account_id`,`sha256`) REFERENCES `data_blobs`(`account_id`,`sha256`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `submission_data_files_account_sha_idx` ON `submission_data_files` (`account_id`,`sha256`);